import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { ChdbThreadError } from './chdb-thread-error.ts';
import { fromEngineError } from './clickhouse-exception.ts';
import { insertFromFileSql, type FileInsert } from './insert-from-file.ts';

/**
 * The main-thread handle on chdb-worker.mjs: one worker thread owning the chDB
 * connections, spoken to by message. Each call resolves with the engine's reply
 * or rejects with a ClickHouseException carrying chDB's code and message
 * (ChdbThreadError once the thread itself is gone).
 *
 * It does not order calls: the caller (EngineQueue) keeps at most one
 * query/insert in flight, as the data connection requires.
 */
export interface QueryReply {
  bytes: Uint8Array;
  rowsRead: number;
  bytesRead: number;
  elapsedSeconds: number;
}

export interface InsertReply {
  rowsWritten: number;
  bytesWritten: number;
  elapsedSeconds: number;
}

interface Reply {
  id: number;
  ok: boolean;
  message?: string;
  bytes?: Uint8Array;
  rowsRead?: number;
  bytesRead?: number;
  rowsWritten?: number;
  bytesWritten?: number;
  elapsed?: number;
}

interface Pending {
  resolve(reply: Reply): void;
  reject(err: Error): void;
}

export class ChdbThread {
  readonly engineVersion: string;
  private readonly worker: Worker;
  private readonly spoolDir: string;
  private nextSpoolFile = 1;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private failure: Error | null = null;
  private readonly exited: Promise<void>;

  private constructor(worker: Worker, engineVersion: string, spoolDir: string) {
    this.worker = worker;
    this.engineVersion = engineVersion;
    this.spoolDir = spoolDir;
    this.exited = new Promise((resolve) => worker.once('exit', () => resolve()));
    worker.on('message', (reply: Reply) => {
      const p = this.pending.get(reply.id);
      if (!p) return;
      this.pending.delete(reply.id);
      p.resolve(reply);
    });
    // A thread that dies (uncaught error, exit) fails everything still waiting on it, and every later call.
    worker.on('error', (err) => this.fail(new ChdbThreadError('CHDB_THREAD_FAILED', `chDB worker failed: ${err.message}`)));
    worker.once('exit', (code) => this.fail(new ChdbThreadError('CHDB_THREAD_EXITED', `chDB worker exited (code ${code})`)));
  }

  /**
   * Starts the thread and opens the connections on `path`; rejects with ChdbThreadError CHDB_OPEN_FAILED if chDB cannot open it.
   * `spoolDir` (an existing directory only this thread writes to) holds insertFromFile()'s data while it runs.
   */
  static async start(options: { path: string; connectionArgs: string[]; spoolDir: string }): Promise<ChdbThread> {
    pinChdbAddon();
    const worker = new Worker(new URL('./chdb-worker.mjs', import.meta.url), {
      workerData: { path: options.path, connectionArgs: options.connectionArgs },
      // The engine logs through its own channels; the worker needs no stdin.
      stdin: false,
    });
    type Hello = { type: string; engineVersion?: string; message?: string };
    const first = await new Promise<Hello>((resolve) => {
      const onMessage = (hello: Hello) => settle(hello);
      const onError = (err: Error) => settle({ type: 'fatal', message: err.message });
      const onExit = (code: number) => settle({ type: 'fatal', message: `worker exited with code ${code} before it was ready` });
      // Only our own listeners come off: Worker keeps internal ones (it refs its port while 'message' has listeners).
      const settle = (hello: Hello) => {
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        resolve(hello);
      };
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
    });
    if (first.type !== 'ready') {
      await worker.terminate();
      throw new ChdbThreadError('CHDB_OPEN_FAILED', `embedded ClickHouse (chDB) could not open ${options.path}: ${first.message ?? 'unknown error'}`);
    }
    return new ChdbThread(worker, first.engineVersion ?? 'unknown', options.spoolDir);
  }

  get alive(): boolean {
    return this.failure === null;
  }

  async query(sql: string, format: string, params?: Record<string, string>): Promise<QueryReply> {
    const r = await this.call({ type: 'query', sql, format, ...(params ? { params } : {}) });
    return {
      bytes: r.bytes ?? new Uint8Array(0),
      rowsRead: r.rowsRead ?? 0,
      bytesRead: r.bytesRead ?? 0,
      elapsedSeconds: r.elapsed ?? 0,
    };
  }

  /**
   * Runs `prefix` with `data` appended (INSERT ... FORMAT X + rows), the data
   * handed to the engine without a string copy. `data` is moved to the worker:
   * the caller must not touch it afterwards.
   */
  async insert(prefix: string, data: Buffer): Promise<InsertReply> {
    const owned = ownsItsMemory(data) ? data : Buffer.from(copyToOwnArrayBuffer(data));
    const r = await this.call({ type: 'insert', prefix, data: owned }, [owned.buffer as ArrayBuffer]);
    return { rowsWritten: r.rowsWritten ?? 0, bytesWritten: r.bytesWritten ?? 0, elapsedSeconds: r.elapsed ?? 0 };
  }

  /**
   * The same INSERT, its data written to a spool file that the engine reads
   * (`FROM INFILE`, see insert-from-file.ts) and that is removed afterwards.
   * `data` is moved to the worker, as for insert().
   */
  async insertFromFile(insert: FileInsert, data: Buffer): Promise<InsertReply> {
    const file = join(this.spoolDir, `insert-${this.nextSpoolFile++}.data`);
    const owned = ownsItsMemory(data) ? data : Buffer.from(copyToOwnArrayBuffer(data));
    const r = await this.call({ type: 'insert-file', sql: insertFromFileSql(insert, file), file, data: owned }, [owned.buffer as ArrayBuffer]);
    return { rowsWritten: r.rowsWritten ?? 0, bytesWritten: r.bytesWritten ?? 0, elapsedSeconds: r.elapsed ?? 0 };
  }

  /** Runs a KILL statement on the second connection, possible while a query runs on the first. */
  async kill(sql: string): Promise<void> {
    await this.call({ type: 'kill', sql });
  }

  /** Closes the connections (the caller has nothing in flight) and waits for the thread to end. */
  async close(): Promise<void> {
    try {
      if (this.alive) await this.call({ type: 'close' });
    } catch (err) {
      // The thread ended meanwhile: there is nothing left to close.
      if (!(err instanceof ChdbThreadError)) throw err;
    }
    await this.exited;
  }

  private call(message: Record<string, unknown>, transfer: ArrayBuffer[] = []): Promise<Reply> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise<Reply>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ ...message, id }, transfer);
    }).then((reply) => {
      if (!reply.ok) throw fromEngineError(reply.message ?? 'unknown chDB error');
      return reply;
    });
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }
}

let addonPinned = false;

/**
 * Loads chDB's native addon on the main thread as well. Without this, the
 * addon (and the engine library behind it) is loaded only by the worker and
 * torn down with it, and the process segfaults when the worker exits (seen
 * with chdb 3.4 / libchdb 26.7). Loading it here only maps the library; no
 * engine starts on this thread.
 */
function pinChdbAddon(): void {
  if (addonPinned) return;
  const require = createRequire(import.meta.url);
  const loader = createRequire(require.resolve('chdb'))('./dist/loader.js') as { loadNative(): unknown };
  loader.loadNative();
  addonPinned = true;
}

/** True when `buf` spans its whole ArrayBuffer, so moving that buffer moves nothing else (pooled Buffers share one). */
function ownsItsMemory(buf: Buffer): boolean {
  return buf.byteOffset === 0 && buf.byteLength === buf.buffer.byteLength && buf.buffer instanceof ArrayBuffer;
}

function copyToOwnArrayBuffer(buf: Buffer): ArrayBuffer {
  const out = new ArrayBuffer(buf.byteLength);
  new Uint8Array(out).set(buf);
  return out;
}
