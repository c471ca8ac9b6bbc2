import type { PGlite } from '@electric-sql/pglite';

/**
 * PGlite is one Postgres session. pglite-socket serves many connections on it and
 * runs their protocol messages one at a time from a shared queue. Its own queue keeps
 * an open transaction with the connection that began it, but lets another
 * connection's messages in between one connection's Parse/Bind/Execute/Sync: a Sync
 * from B then ends A's implicit transaction and drops A's unnamed portal, and A's
 * Execute fails with `portal "" does not exist` (seen from the CLI beside `npm start`);
 * a Bind from B replaces A's portal.
 *
 * This queue lends the session to one connection from its first message until the
 * session is idle again: after a message that ends a request cycle (Sync, simple
 * Query, function call, the startup message, Terminate) with no transaction open.
 * Meanwhile other connections' messages wait, in arrival order.
 *
 * It replaces pglite-socket's internal queue (same method names, see
 * installSessionQueue), which is a private field of PGLiteSocketServer.
 */
interface Queued {
  handlerId: number;
  /** null: the connection is gone; give the session back if it holds it. */
  message: Uint8Array | null;
  onData: (data: Uint8Array) => void;
  resolve: (bytes: number) => void;
  reject: (err: Error) => void;
}

/** First byte of a message that ends a request cycle: the server answers ReadyForQuery (or closes) after it. */
const CYCLE_ENDS = new Set([
  0x00, // startup message (no type byte: its length's high byte)
  0x53, // 'S' Sync
  0x51, // 'Q' simple Query
  0x46, // 'F' FunctionCall
  0x58, // 'X' Terminate
]);
const SYNC = new Uint8Array([0x53, 0, 0, 0, 4]);

export class PgliteSessionQueue {
  private readonly db: PGlite;
  private queue: Queued[] = [];
  /** The connection the session is lent to, or null when it is idle. */
  private owner: number | null = null;
  private processing = false;
  /** The connection whose message PGlite is running. */
  private inFlight: number | null = null;

  constructor(db: PGlite) {
    this.db = db;
  }

  enqueue(handlerId: number, message: Uint8Array, onData: (data: Uint8Array) => void): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ handlerId, message, onData, resolve, reject });
      void this.process();
    });
  }

  getQueueLength(): number {
    return this.queue.length;
  }

  clearQueueForHandler(handlerId: number): void {
    this.queue = this.queue.filter((q) => {
      if (q.handlerId !== handlerId) return true;
      q.reject(new Error('Handler disconnected'));
      return false;
    });
  }

  /**
   * A connection went away. If it holds the session (or its message under way will make
   * it hold it), its turn comes next: roll back its transaction and end its unfinished
   * request cycle (a Sync also clears an error state that would make the session skip
   * the next connection's messages). Then the others are served.
   */
  async clearTransactionIfNeeded(handlerId: number): Promise<void> {
    if (this.owner !== handlerId && this.inFlight !== handlerId) return;
    await new Promise<number>((resolve, reject) => {
      this.queue.push({ handlerId, message: null, onData: () => {}, resolve, reject });
      void this.process();
    });
  }

  private async release(handlerId: number): Promise<void> {
    if (this.owner !== handlerId) return;
    await this.db.runExclusive(() => this.db.execProtocolRaw(SYNC));
    // exec() takes PGlite's lock itself.
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    this.owner = null;
  }

  private next(): Queued | undefined {
    if (this.owner === null) return this.queue.shift();
    const i = this.queue.findIndex((q) => q.handlerId === this.owner);
    return i === -1 ? undefined : this.queue.splice(i, 1)[0];
  }

  private async process(): Promise<void> {
    if (this.processing) return;
    this.processing = true;
    try {
      for (let item = this.next(); item; item = this.next()) {
        const query = item;
        const message = query.message;
        if (message === null) {
          await this.release(query.handlerId).then(
            () => query.resolve(0),
            (err: Error) => {
              this.owner = null;
              query.reject(err);
            },
          );
          continue;
        }
        let bytes = 0;
        this.inFlight = query.handlerId;
        try {
          await this.db.runExclusive(() =>
            this.db.execProtocolRawStream(message, {
              onRawData: (data) => {
                bytes += data.length;
                query.onData(data);
              },
            }),
          );
        } catch (err) {
          // PGlite itself failed (not a statement: those come back as ErrorResponse data).
          this.owner = null;
          query.reject(err as Error);
          continue;
        } finally {
          this.inFlight = null;
        }
        const endsCycle = CYCLE_ENDS.has(message[0]!);
        this.owner = endsCycle && !this.db.isInTransaction() ? null : query.handlerId;
        query.resolve(bytes);
      }
    } finally {
      this.processing = false;
    }
  }
}

/** Puts a PgliteSessionQueue in place of pglite-socket's own; before the server accepts a connection. */
export function installSessionQueue(server: object, db: PGlite): void {
  const internals = server as { queryQueue?: unknown };
  if (internals.queryQueue === undefined) {
    throw new Error('@electric-sql/pglite-socket no longer has the queryQueue this module replaces; check shared/db/pglite-session-queue.ts against its source');
  }
  internals.queryQueue = new PgliteSessionQueue(db);
}
