// The implicit API methods CCXT's Exchange constructor generates from describe().api (the same role
// as ccxt's generated js/src/abstract/<exchange>.js files): declared here so TypeScript sees them.
import { Exchange } from 'ccxt';

type Dict = Record<string, unknown>;
// CCXT's implicit methods answer the parsed JSON body, whatever its shape.
type Implicit = (params?: Dict) => Promise<any>;

export default abstract class TenebraApi extends Exchange {
  declare publicPostAuthToken: Implicit;
  declare publicPostAuthTokenRevoke: Implicit;
  declare publicGetInstruments: Implicit;
  declare publicGetVipTiers: Implicit;
  declare privateGetTime: Implicit;
  declare privateGetAccount: Implicit;
  declare privateGetAccountVip: Implicit;
  declare privateGetPositions: Implicit;
  declare privateGetPositionsSymbolLeverage: Implicit;
  declare privatePostPositionsSymbolLeverage: Implicit;
  declare privatePostPositionsSymbolMargin: Implicit;
  declare privateGetOrders: Implicit;
  declare privateGetOrdersOrderId: Implicit;
  declare privateGetFills: Implicit;
  declare privatePostOrders: Implicit;
  declare privatePatchOrdersOrderId: Implicit;
  declare privateDeleteOrders: Implicit;
  declare privateDeleteOrdersOrderId: Implicit;
}
