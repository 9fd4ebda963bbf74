// Stream tickets: EventSource (the browser API) cannot send an Authorization header, so a client with a
// bearer token first asks POST /events/tickets for a short-lived random ticket and opens
// /events/notifications?ticket=<ticket>. A ticket opens streams of that one account for 60 s (so
// EventSource's own reconnects work), never outlives the token that minted it, and grants nothing
// but reading the notification stream. In memory, bounded.
import { randomBytes } from 'node:crypto';

export const TICKET_TTL_MS = 60_000;
export const MAX_TICKETS = 50_000;

export interface Ticket {
  userId: string;
  /** the minting token's jti and expiry (ms): the stream ends when the token would have */
  jti: string;
  tokenExpMs: number;
  expiresMs: number;
}

export class TicketStore {
  private readonly tickets = new Map<string, Ticket>();

  constructor(private readonly nowMs: () => number) {}

  /** A new ticket for the account, valid TICKET_TTL_MS (or until the token expires, if sooner). */
  issue(userId: string, jti: string, tokenExpMs: number): { ticket: string; expires_in: number } {
    const now = this.nowMs();
    this.prune(now);
    if (this.tickets.size >= MAX_TICKETS) this.tickets.delete(this.tickets.keys().next().value as string);
    const ticket = `st_${randomBytes(24).toString('base64url')}`;
    const expiresMs = Math.min(now + TICKET_TTL_MS, tokenExpMs);
    this.tickets.set(ticket, { userId, jti, tokenExpMs, expiresMs });
    return { ticket, expires_in: Math.max(0, Math.floor((expiresMs - now) / 1000)) };
  }

  /** The ticket's grant, or null when unknown or expired. */
  check(ticket: string): Ticket | null {
    const t = this.tickets.get(ticket);
    if (!t) return null;
    if (this.nowMs() >= t.expiresMs) {
      this.tickets.delete(ticket);
      return null;
    }
    return t;
  }

  private prune(now: number): void {
    for (const [k, t] of this.tickets) {
      if (now < t.expiresMs) break; // insertion order is expiry order (same TTL)
      this.tickets.delete(k);
    }
  }
}
