// Persisting books in the MPC engine's transactional store (JobContext.save/savePublic), which
// survives across jobs and is covered by share recovery: a node that recovers gets fresh shares of
// every book. Layout per symbol: public `matching/book/<symbol>` = BookSnapshotPub JSON; secret
// `matching/book/<symbol>` = the snapshot's secrets concatenated (absent for an empty book).
// Cost is linear in the book's size: save only the books a job touched.
import type { JobContext, Sec } from '@tenebra/mpc';
import type { BookSnapshotPub } from './book';
import { Book } from './book';

const PREFIX = 'matching/book/';

/** Store name of a symbol's book. */
export function bookStoreName(symbol: string): string {
  return PREFIX + symbol;
}

/** Writes a book (structure and secrets) into the job's store; visible to later jobs once this job completes. */
export function saveBook(ctx: JobContext, book: Book<Sec>): void {
  const snap = book.toSnapshot();
  const name = bookStoreName(book.symbol);
  ctx.savePublic(name, JSON.stringify(snap.pub));
  if (snap.secrets.length === 0) {
    if (ctx.load(name) !== undefined) ctx.remove(name);
  } else {
    ctx.save(name, ctx.concat(snap.secrets));
  }
}

/** Reads a book back from the store, or undefined when none was saved. */
export function loadBook(ctx: JobContext, symbol: string): Book<Sec> | undefined {
  const name = bookStoreName(symbol);
  const json = ctx.loadPublic(name);
  if (json === undefined) return undefined;
  const pub = JSON.parse(json) as BookSnapshotPub;
  const all = ctx.load(name);
  const n = all?.length ?? 0;
  const secrets: Sec[] = [];
  for (let i = 0; i < n; i += 1) secrets.push(ctx.slice(all as Sec, i, i + 1));
  return Book.fromSnapshot<Sec>(pub, secrets);
}

/** Symbols that have a saved book, sorted. */
export function storedBookSymbols(ctx: JobContext): string[] {
  return ctx.publicNames().filter((n) => n.startsWith(PREFIX)).map((n) => n.slice(PREFIX.length));
}
