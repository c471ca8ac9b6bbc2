import type { ChdbThread, InsertReply, QueryReply } from './chdb-thread.ts';
import { ChdbThreadError } from './chdb-thread-error.ts';
import { ClickHouseException, clickHouseException } from './clickhouse-exception.ts';
import type { ConnectionState } from './connection-state.ts';
import type { FileInsert } from './insert-from-file.ts';

/**
 * The one queue in front of the chDB data connection: statements run one at a
 * time, in arrival order, each preceded (when needed) by the SET/USE call that
 * gives it its own settings and database (see ConnectionState). The prefix is
 * a call of its own so the statement reaches the engine exactly as the client
 * sent it, and error positions match a server's.
 *
 * Cancellation, as a server does it: a statement whose client went away is
 * dropped if still queued, and KILLed if it is a running query. A running
 * insert is left to finish; a retried insert carries its deduplication token.
 *
 * Invariant for KILL: the data connection runs only the current entry, and
 * the second connection only KILL statements, so "every query but a KILL"
 * is the current entry. The next entry starts only once a pending KILL has
 * completed, so a late KILL can never hit it.
 */
export type EngineCall =
  | { kind: 'query'; sql: string; format: string; params: Record<string, string> | undefined }
  | { kind: 'insert'; prefix: string; data: Buffer }
  /** `INSERT INTO <target> FORMAT <format>` with `data`, the engine reading it from a spool file (insert-from-file.ts). */
  | { kind: 'insert-from-file'; insert: FileInsert; data: Buffer };

export interface EngineJob {
  call: EngineCall;
  /** Settings to apply to this statement alone (already filtered by SettingsPolicy). */
  settings: ReadonlyMap<string, string>;
  database: string;
  signal?: AbortSignal;
}

export type EngineOutcome = { kind: 'query'; reply: QueryReply } | { kind: 'insert'; reply: InsertReply };

interface Entry {
  job: EngineJob;
  resolve(outcome: EngineOutcome): void;
  reject(err: Error): void;
  settled: Promise<unknown> | null;
}

const KILL_RUNNING = "KILL QUERY WHERE query NOT LIKE 'KILL QUERY%' ASYNC";

export class EngineQueue {
  private readonly thread: ChdbThread;
  private readonly state: ConnectionState;
  private readonly waiting: Entry[] = [];
  private running: Entry | null = null;
  private closing = false;
  private killing: Promise<void> | null = null;

  constructor(thread: ChdbThread, state: ConnectionState) {
    this.thread = thread;
    this.state = state;
  }

  get alive(): boolean {
    return !this.closing && this.thread.alive;
  }

  run(job: EngineJob): Promise<EngineOutcome> {
    if (this.closing) return Promise.reject(clickHouseException('ABORTED', 'The embedded ClickHouse is shutting down'));
    if (job.signal?.aborted) return Promise.reject(cancelled());
    return new Promise<EngineOutcome>((resolve, reject) => {
      const entry: Entry = { job, resolve, reject, settled: null };
      job.signal?.addEventListener('abort', () => this.cancel(entry), { once: true });
      this.waiting.push(entry);
      this.pump();
    });
  }

  /** Refuses new work, fails what is queued, kills a running query, waits for it, closes the engine. */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    for (const entry of this.waiting.splice(0)) entry.reject(clickHouseException('ABORTED', 'The embedded ClickHouse is shutting down'));
    const running = this.running;
    if (running) {
      if (running.job.call.kind === 'query') this.killRunning();
      await running.settled;
      await this.killing;
    }
    await this.thread.close();
  }

  private cancel(entry: Entry): void {
    const queuedAt = this.waiting.indexOf(entry);
    if (queuedAt >= 0) {
      this.waiting.splice(queuedAt, 1);
      entry.reject(cancelled());
    } else if (this.running === entry && entry.job.call.kind === 'query') {
      this.killRunning();
    }
  }

  private killRunning(): void {
    if (this.killing) return;
    this.killing = this.thread
      .kill(KILL_RUNNING)
      .catch((err: unknown) => {
        // The engine refused the KILL (the query then ends by itself), or the thread is gone (every call fails).
        if (!(err instanceof ClickHouseException || err instanceof ChdbThreadError)) throw err;
      })
      .finally(() => {
        this.killing = null;
      });
  }

  private pump(): void {
    if (this.running || this.closing) return;
    const entry = this.waiting.shift();
    if (!entry) return;
    this.running = entry;
    entry.settled = this.execute(entry).then(entry.resolve, entry.reject).finally(() => {
      this.running = null;
      this.pump();
    });
  }

  private async execute(entry: Entry): Promise<EngineOutcome> {
    if (this.killing) await this.killing;
    const { call, settings, database } = entry.job;
    try {
      const prefix = this.state.prefixFor(settings, database);
      if (prefix) {
        try {
          await this.thread.query(prefix, 'TabSeparated');
        } catch (err) {
          this.state.failed(settings);
          throw err;
        }
        this.state.committed(settings, database);
      }
      switch (call.kind) {
        case 'insert':
          return { kind: 'insert', reply: await this.thread.insert(call.prefix, call.data) };
        case 'insert-from-file':
          return { kind: 'insert', reply: await this.thread.insertFromFile(call.insert, call.data) };
        case 'query':
          return { kind: 'query', reply: await this.thread.query(call.sql, call.format, call.params) };
      }
    } catch (err) {
      await this.flushLeftovers();
      throw err;
    }
  }

  /**
   * chDB (libchdb 26.7) keeps the output a statement produced before it failed
   * or was killed (rows, a JSON header/footer) and prepends it to the result of
   * the connection's next statement. Run a statement whose own output is
   * nothing and throw that away, so no client ever receives another's rows.
   * A KILL aimed at the failed statement can still land on this one, hence
   * waiting for it and trying again.
   */
  private async flushLeftovers(): Promise<void> {
    for (let attempt = 0; attempt < 3; attempt++) {
      if (this.killing) await this.killing;
      try {
        await this.thread.query('SELECT 1 FORMAT Null', 'TabSeparated');
        return;
      } catch (err) {
        // A KILL aimed at the failed statement landed on this one: go again.
        if (!(err instanceof ClickHouseException)) throw err;
      }
    }
  }
}

function cancelled() {
  return clickHouseException('QUERY_WAS_CANCELLED', 'The client closed the request before the query ran');
}
