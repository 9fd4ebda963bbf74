// Updates a watch* method has not returned yet, per channel: CCXT's "new updates since the last
// call" semantics (exchange.newUpdates) without its internal caches, which the ccxt package does
// not export. A watch call takes what matches its filter at once, or waits for the next match.

interface Waiter<T> {
  match: (item: T) => boolean;
  resolve: (items: T[]) => void;
  reject: (e: Error) => void;
}

export class UpdateQueue<T> {
  readonly #items: T[] = [];
  readonly #waiters: Waiter<T>[] = [];

  /** Bound on buffered updates nobody asked for yet (the oldest go first). */
  constructor(private readonly maxItems = 1_000) {}

  push(item: T): void {
    this.#items.push(item);
    if (this.#items.length > this.maxItems) this.#items.splice(0, this.#items.length - this.maxItems);
    for (const w of [...this.#waiters]) {
      const taken = this.#take(w.match);
      if (taken.length === 0) continue;
      this.#waiters.splice(this.#waiters.indexOf(w), 1);
      w.resolve(taken);
    }
  }

  /** The buffered updates that match, or (none) a promise of the next ones. */
  next(match: (item: T) => boolean): Promise<T[]> {
    const taken = this.#take(match);
    if (taken.length > 0) return Promise.resolve(taken);
    return new Promise<T[]>((resolve, reject) => this.#waiters.push({ match, resolve, reject }));
  }

  /** Fails every waiting call (the socket closed). */
  fail(e: Error): void {
    for (const w of this.#waiters.splice(0)) w.reject(e);
  }

  #take(match: (item: T) => boolean): T[] {
    const taken: T[] = [];
    for (let i = 0; i < this.#items.length; ) {
      const item = this.#items[i] as T;
      if (match(item)) {
        taken.push(item);
        this.#items.splice(i, 1);
      } else i++;
    }
    return taken;
  }
}
