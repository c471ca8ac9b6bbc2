import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { CodedError } from '../coded-error.ts';
import { WireExchanges } from './wire-exchanges.ts';

/**
 * Postgres did not answer on an open connection within the bound: the connection is
 * closed, and every query waiting on it fails with this (a store outage: 503).
 */
export class PostgresAnswerTimeout extends CodedError<'POSTGRES_ANSWER_TIMEOUT'> {}

/** What postgres.js passes its `socket` option: the parsed host list, or a Unix socket path. */
export interface SocketTarget {
  host: string[];
  port: number[];
  path?: string | false;
}

export interface AnswerWatch {
  /** postgres.js's `socket` option: opens each connection's socket, and watches it. */
  openSocket(target: SocketTarget): Socket;
  /** Runs `work` with no bound: migrations wait on other migrators' locks and build indexes for as long as that takes. */
  unbounded<T>(work: () => Promise<T>): Promise<T>;
}

interface Watched {
  socket: Socket;
  /** Its exchanges, counted off the plaintext protocol; opaque under TLS. */
  exchanges: WireExchanges;
  read: number;
  written: number;
  /** Since when the connection has sent bytes and received none; null: it is not waiting. */
  waitingSince: number | null;
  /** When its socket last received a byte (when it was opened, before the first); over TLS, the TLS socket. */
  heardAt: number;
  /** The bound was found passed on one tick already. */
  overdue: boolean;
}

/** What the patched postgres.js calls on a socket the `socket` option made, once it has made a TLS socket over it. */
interface TlsUpgradable {
  onTlsUpgrade?: (tlsSocket: Socket) => void;
}

/**
 * Reads what postgres.js writes to `socket` and reads from it into `w.exchanges`, and when it
 * last heard anything. Data arrives only after postgres.js has added its own listener (the
 * socket is not connected yet; over TLS, the server says nothing before the startup message
 * postgres.js sends once listening), so listening does not take bytes from it.
 */
function readWire(w: Watched, socket: Socket): void {
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  socket.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (chunk instanceof Uint8Array) w.exchanges.sentBytes(chunk);
    else if (typeof chunk === 'string') w.exchanges.sentBytes(Buffer.from(chunk));
    return write(chunk, ...rest);
  }) as Socket['write'];
  socket.on('data', (chunk: Buffer) => {
    w.heardAt = performance.now();
    w.exchanges.receivedBytes(chunk);
  });
}

/**
 * Closes a connection that has sent Postgres something and heard nothing back for
 * `timeoutMs`. postgres.js has no per-query timeout, and `connect_timeout` covers only
 * the handshake: on a stalled path (a hung proxy or load balancer, a primary that stopped
 * answering) a query would wait for ever, holding its request and its pool slot. Closing
 * the socket fails its queries with PostgresAnswerTimeout (the server rolls back what the
 * connection had open, so a 503 leaves nothing half done), and postgres.js opens a new
 * connection for the next query.
 *
 * A connection waits while an exchange it sent (a statement, a pipelined batch of them)
 * has not been answered to its ReadyForQuery (wire-exchanges.ts), and the bound runs from
 * the last byte it received: a stall that begins once part of what it awaits has arrived
 * (the first of two pipelined answers, the start of a long result) is caught too. An idle
 * connection, or one inside a transaction while its request does something else, is never
 * closed. Over TLS the messages are read on the TLS socket postgres.js makes, in the clear
 * (postgres.js hands it over: patches/). A connection whose messages cannot be read
 * (`opaque`: none that postgres.js opens, but a cancel request's) falls back to the
 * socket's byte counts, read on a timer: there a read ends a wait, so a stall after part of
 * an answer, or of a statement sent within the same tick (tickMs) as an answer arrived, is
 * caught at the connection's next write only.
 *
 * A connection closed for its silence takes with it the pool's idle connections (nothing
 * unanswered, outside a transaction) that have heard nothing since its wait began: a
 * stalled path (a failover behind a load balancer) stalls every open connection, and
 * found one statement at a time, each at the cost of a whole bound, a pool of ten took
 * ten bounds to recover, its requests failing meanwhile. Closing an idle connection fails
 * nothing sent (postgres.js opens a new one for its next query), and leaves no transaction
 * half done, so a connection that was fine costs a reconnect only. One case costs more: a
 * statement handed to it in the same instant, whose write postgres.js defers to the end
 * of the loop turn, fails as the silent connection's statements do (a 503).
 */
export function answerWatch(timeoutMs: number): AnswerWatch {
  const watched = new Set<Watched>();
  // Fine enough that a bound of a few seconds is kept within a few percent.
  const tickMs = Math.min(100, Math.max(10, timeoutMs / 20));
  let timer: NodeJS.Timeout | null = null;
  let hostIndex = 0;
  let unboundedRuns = 0;

  function tick(): void {
    const now = performance.now();
    for (const w of watched) {
      // Not a 'close' listener: postgres.js takes every listener off a socket it turns TLS.
      if (w.socket.destroyed) {
        watched.delete(w);
        continue;
      }
      const read = w.socket.bytesRead;
      const written = w.socket.bytesWritten;
      if (!w.exchanges.opaque) {
        // Waiting from the last byte received while an exchange is unanswered.
        if (w.exchanges.unanswered <= 0) w.waitingSince = null;
        else if (read !== w.read || w.waitingSince === null) w.waitingSince = now;
      } else if (read !== w.read) w.waitingSince = null;
      else if (written !== w.written && w.waitingSince === null) w.waitingSince = now;
      w.read = read;
      w.written = written;
      if (unboundedRuns > 0) w.waitingSince = null;
      if (w.waitingSince === null || now - w.waitingSince < timeoutMs) {
        w.overdue = false;
        continue;
      }
      // The first tick past the bound may run straight after a blocked event loop (a long
      // statement of the embedded PGlite, in this very process), before the answer waiting
      // in the socket is read: only a second one is trusted.
      if (!w.overdue) {
        w.overdue = true;
        continue;
      }
      watched.delete(w);
      const timedOut = () => w.socket.destroy(new PostgresAnswerTimeout('POSTGRES_ANSWER_TIMEOUT', `Postgres did not answer within ${timeoutMs} ms; connection closed`));
      const silentSince = w.waitingSince;
      const silent = w.exchanges.opaque ? [] : [...watched].filter((other) => !other.socket.destroyed && other.exchanges.idle && other.heardAt <= silentSince);
      if (silent.length === 0) {
        timedOut();
        continue;
      }
      // The idle ones first, and the silent one's queries failed once postgres.js has seen
      // them close (within the loop turn; a tick at the latest): a caller that tries again at
      // once (the failure would come before the closes otherwise) would be handed one of them
      // and fail again.
      const closes = silent.map((other) => {
        watched.delete(other);
        const closed = new Promise((resolve) => other.socket.once('close', resolve));
        other.socket.destroy();
        return closed;
      });
      void Promise.race([Promise.all(closes), new Promise((resolve) => setTimeout(resolve, tickMs))]).then(timedOut);
    }
    if (watched.size === 0 && timer !== null) {
      clearInterval(timer);
      timer = null;
    }
  }

  return {
    openSocket(target) {
      // As postgres.js does without this option: a Unix socket, or the next of the hosts.
      let socket: Socket;
      if (target.path) {
        socket = connect(target.path);
      } else {
        const i = hostIndex++ % target.host.length;
        socket = connect(target.port[i] ?? 5432, target.host[i]);
        // postgres.js reads these for TLS's server name and its errors' messages.
        Object.assign(socket, { host: target.host[i], port: target.port[i] });
      }
      const w: Watched = { socket, exchanges: new WireExchanges(), read: 0, written: 0, waitingSince: null, heardAt: performance.now(), overdue: false };
      readWire(w, socket);
      // Asked for TLS, postgres.js hands over the TLS socket it made over this one (patches/):
      // the protocol passes there in the clear, from its startup message on, and the watch
      // follows it, and closes it on a timeout. (This socket's own exchanges went opaque at
      // the SSLRequest.)
      (socket as Socket & TlsUpgradable).onTlsUpgrade = (tlsSocket) => {
        w.socket = tlsSocket;
        w.exchanges = new WireExchanges();
        w.read = 0;
        w.written = 0;
        readWire(w, tlsSocket);
      };
      watched.add(w);
      timer ??= setInterval(tick, tickMs).unref();
      return socket;
    },
    async unbounded(work) {
      unboundedRuns++;
      try {
        return await work();
      } finally {
        unboundedRuns--;
      }
    },
  };
}
