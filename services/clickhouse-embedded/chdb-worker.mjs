// @ts-check
/**
 * The chDB thread. chDB calls are native and block the thread they run on, so
 * the engine lives here, away from the HTTP server's event loop (which, in
 * all-in-one mode, is also the redirector's). This file is plain JavaScript on
 * purpose: a worker entry has to load under plain Node, tsx and vitest alike,
 * and a .mjs needs no loader. It is deliberately thin: every decision (SQL
 * assembly, settings, queueing, error mapping) is made by the typed main-thread
 * side in chdb-thread.ts / engine-queue.ts; this file only executes.
 *
 * Protocol (one message in, one reply out, matched by `id`):
 *   { id, type: 'query',  sql, format, params? }  -> { id, ok, bytes, rowsRead, bytesRead, elapsed }
 *   { id, type: 'insert', prefix, data }          -> { id, ok, rowsWritten, bytesWritten, elapsed }
 *   { id, type: 'insert-file', sql, file, data }  -> the same; `data` is written to `file`, which
 *                                                    `sql` reads (FROM INFILE), then removed
 *   { id, type: 'kill',   sql }                   -> { id, ok }   (runs on the second connection)
 *   { id, type: 'close' }                         -> { id, ok }   then the thread exits by itself
 *   failures                                      -> { id, ok: false, message }
 * At startup it posts { type: 'ready', engineVersion } or { type: 'fatal', message }.
 *
 * Invariants: the main thread sends at most one query/insert at a time (the data
 * connection runs one statement at a time); 'kill' may arrive while one runs,
 * which is why the calls below are the async (libuv pool) variants, leaving this
 * thread free to receive it. 'close' is sent only once nothing else is in flight.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { rm, writeFile } from 'node:fs/promises';

if (!parentPort) throw new Error('chdb-worker.mjs must run as a worker thread');
const port = parentPort;
const require = createRequire(import.meta.url);

/** @type {any} */ let data = null;
/** @type {any} */ let killer = null;
/** @type {any} */ let native = null;
/** @type {() => Promise<void>} */ let drainPending = async () => {};
let ready = false;

try {
  const chdb = require('chdb');
  drainPending = chdb.drainPending;
  // chdb's public Session binds {name:Type} values by re-serialising JS values,
  // which would double-escape the already-serialised `param_<name>` strings the
  // HTTP protocol carries. The addon's own entry points take those strings as
  // ClickHouse's server does (its text parser, per declared type). They sit
  // behind chdb's loader, which is not an exported subpath, hence the path.
  native = createRequire(require.resolve('chdb'))('./dist/loader.js').loadNative();
  for (const fn of ['QueryAsyncConnection', 'InsertRawAsyncConnection']) {
    if (typeof native[fn] !== 'function') throw new Error(`chdb addon has no ${fn}(); this chdb version is not supported`);
  }
  const { path, connectionArgs } = /** @type {{ path: string, connectionArgs: string[] }} */ (workerData);
  data = new chdb.Session(path, { connectionArgs });
  // A second connection to the same path, used only to KILL a running query:
  // the data connection is busy exactly when a kill is needed.
  killer = new chdb.Session(path, { connectionArgs });
  const version = await native.QueryAsyncConnection(data.connection, 'SELECT version()', 'TabSeparated');
  port.postMessage({ type: 'ready', engineVersion: Buffer.from(version.bytes).toString('utf8').trim() });
  ready = true;
} catch (err) {
  port.postMessage({ type: 'fatal', message: err instanceof Error ? err.message : String(err) });
  await closeSessions();
  port.close();
}

/** @type {Set<Promise<unknown>>} */
const inFlight = new Set();
const NO_DATA = Buffer.alloc(0);

if (ready) port.on('message', (msg) => {
  if (msg.type === 'close') {
    void close(msg.id);
    return;
  }
  const op = start(msg);
  inFlight.add(op);
  op.then(
    (result) => {
      try {
        port.postMessage({ id: msg.id, ok: true, ...result.reply }, result.transfer);
      } catch (err) {
        if (!(err instanceof DOMException && err.name === 'DataCloneError')) throw err;
        port.postMessage({ id: msg.id, ok: true, ...result.reply }); // not movable after all: copy
      }
    },
    (err) => port.postMessage({ id: msg.id, ok: false, message: err instanceof Error ? err.message : String(err) }),
  ).finally(() => inFlight.delete(op));
});

/** @returns {Promise<{ reply: Record<string, unknown>, transfer: ArrayBuffer[] }>} */
async function start(msg) {
  switch (msg.type) {
    case 'query': {
      const args = [data.connection, msg.sql, msg.format];
      if (msg.params) args.push(msg.params);
      const r = await native.QueryAsyncConnection(...args);
      /** @type {Uint8Array} */ const bytes = r.bytes;
      // The addon allocates a fresh buffer per result: move it, do not copy it.
      const whole = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
      return {
        reply: { bytes, rowsRead: r.rowsRead, bytesRead: r.bytesRead, elapsed: r.elapsed },
        transfer: whole ? [/** @type {ArrayBuffer} */ (bytes.buffer)] : [],
      };
    }
    case 'insert': {
      /** @type {Uint8Array} */ const d = msg.data;
      const buf = Buffer.from(d.buffer, d.byteOffset, d.byteLength);
      // countLines=true: the addon counts payload lines off-thread; harmless, and
      // it is the flag chdb itself passes for line-delimited formats.
      const r = await native.InsertRawAsyncConnection(data.connection, msg.prefix, buf, true);
      return { reply: { rowsWritten: r.rowsWritten, bytesWritten: r.bytesWritten, elapsed: r.elapsed }, transfer: [] };
    }
    case 'insert-file': {
      /** @type {Uint8Array} */ const d = msg.data;
      await writeFile(msg.file, d);
      try {
        // The statement names its data (FROM INFILE): nothing follows its text.
        const r = await native.InsertRawAsyncConnection(data.connection, msg.sql, NO_DATA, false);
        return { reply: { rowsWritten: r.rowsWritten, bytesWritten: r.bytesWritten, elapsed: r.elapsed }, transfer: [] };
      } finally {
        await rm(msg.file, { force: true });
      }
    }
    case 'kill': {
      await native.QueryAsyncConnection(killer.connection, msg.sql, 'TabSeparated');
      return { reply: {}, transfer: [] };
    }
    default:
      throw new Error(`unknown message type ${String(msg.type)}`);
  }
}

/** Closing a connection while a native call still runs on it aborts the engine, so wait for them first. */
async function close(id) {
  await Promise.allSettled([...inFlight]);
  await closeSessions();
  port.postMessage({ id, ok: true });
  port.close();
}

/** A failure here ends the thread (the main thread sees it exit): it is about to end anyway. */
async function closeSessions() {
  killer?.close();
  data?.close();
  await drainPending();
}
