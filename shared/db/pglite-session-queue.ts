import type { PGlite } from '@electric-sql/pglite';

/**
 * PGlite is one Postgres session; pglite-wire-server.ts serves many connections on it.
 * Their protocol messages must not interleave within a request cycle: a Sync from B
 * between A's Parse/Bind/Execute/Sync ends A's implicit transaction and drops A's
 * unnamed portal (A's Execute then fails with `portal "" does not exist`, seen from the
 * CLI beside `npm start`), and a Bind from B replaces A's portal.
 *
 * So the session is lent to one connection from its first message until the session
 * is idle again: after a message that ends a request cycle (Sync, simple Query,
 * function call, the startup message, Terminate) with no transaction open. Meanwhile
 * other connections' messages wait, in arrival order. Only PGlite's public API is used
 * (runExclusive, execProtocolRawStream, isInTransaction).
 */
interface Queued {
  connection: number;
  /** null: the connection is gone; give the session back if it holds it. */
  message: Uint8Array | null;
  endsCycle: boolean;
  onData: (data: Uint8Array) => void;
  resolve: () => void;
  reject: (err: Error) => void;
}

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

  /**
   * Runs one message of `connection` when its turn comes, passing PGlite's answer to
   * `onData`. `endsCycle`: the server answers ReadyForQuery (or closes) after it.
   * Resolves without running it if the connection disconnects first.
   */
  run(connection: number, message: Uint8Array, endsCycle: boolean, onData: (data: Uint8Array) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ connection, message, endsCycle, onData, resolve, reject });
      void this.process();
    });
  }

  /**
   * A connection went away: its waiting messages are dropped, and if it holds the
   * session (or its message under way will make it hold it), its turn comes next: roll
   * back its transaction and end its unfinished request cycle (a Sync also clears an
   * error state that would make the session skip the next connection's messages). Then
   * the others are served.
   */
  async disconnect(connection: number): Promise<void> {
    this.queue = this.queue.filter((q) => {
      if (q.connection !== connection) return true;
      q.resolve();
      return false;
    });
    if (this.owner !== connection && this.inFlight !== connection) return;
    await new Promise<void>((resolve, reject) => {
      this.queue.push({ connection, message: null, endsCycle: true, onData: () => {}, resolve, reject });
      void this.process();
    });
  }

  private async release(connection: number): Promise<void> {
    if (this.owner !== connection) return;
    await this.db.runExclusive(() => this.db.execProtocolRaw(SYNC));
    // exec() takes PGlite's lock itself.
    if (this.db.isInTransaction()) await this.db.exec('ROLLBACK');
    this.owner = null;
  }

  private next(): Queued | undefined {
    if (this.owner === null) return this.queue.shift();
    const i = this.queue.findIndex((q) => q.connection === this.owner);
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
          await this.release(query.connection).then(query.resolve, (err: Error) => {
            this.owner = null;
            query.reject(err);
          });
          continue;
        }
        this.inFlight = query.connection;
        try {
          await this.db.runExclusive(() => this.db.execProtocolRawStream(message, { onRawData: query.onData }));
        } catch (err) {
          // PGlite itself failed (not a statement: those come back as ErrorResponse data).
          this.owner = null;
          query.reject(err as Error);
          continue;
        } finally {
          this.inFlight = null;
        }
        this.owner = query.endsCycle && !this.db.isInTransaction() ? null : query.connection;
        query.resolve();
      }
    } finally {
      this.processing = false;
    }
  }
}
