import { createServer, type Server, type Socket } from 'node:net';
import type { PGlite } from '@electric-sql/pglite';
import { PgliteSessionQueue } from './pglite-session-queue.ts';

/**
 * Serves PGlite over the Postgres wire protocol on a Unix socket, for any number of
 * connections, each one's request cycles kept whole on the one session
 * (pglite-session-queue.ts).
 *
 * Written here rather than taken from @electric-sql/pglite-socket: that server's
 * multiplexer interleaves two connections' Parse/Bind/Execute/Sync (hence
 * `portal "" does not exist`), and it offers no public way to put another queue in
 * its place. What it did besides is small: frame the messages, and answer the
 * pre-startup requests, which this file does.
 *
 * Frontend messages: before startup, untyped (int32 length, int32 code), after it,
 * typed (one type byte, int32 length counting itself). PGlite answers everything from
 * the startup message on; it has no authentication, hence the owner-only socket
 * directory (embedded-postgres.ts).
 */
export interface PgliteWireServer {
  stop(): Promise<void>;
}

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const PROTOCOL_3_0 = 196608;
/** Postgres refuses a startup packet longer than this (MAX_STARTUP_PACKET_LENGTH). */
const MAX_STARTUP_LENGTH = 10_000;
/** Type bytes of the messages after which the server answers ReadyForQuery (or closes). */
const CYCLE_ENDS = new Set([
  0x53, // 'S' Sync
  0x51, // 'Q' simple Query
  0x46, // 'F' FunctionCall
  0x58, // 'X' Terminate
]);
/** "No" to SSL and GSS encryption: the client goes on unencrypted on the same connection. */
const REFUSE_ENCRYPTION = Buffer.from('N');

export async function servePglite(db: PGlite, options: { path: string; maxConnections: number }): Promise<PgliteWireServer> {
  const session = new PgliteSessionQueue(db);
  const connections = new Set<Connection>();
  let nextId = 1;
  const server: Server = createServer((socket) => {
    const connection = new Connection(nextId++, socket, session);
    connections.add(connection);
    void connection.closed.then(() => connections.delete(connection));
  });
  server.maxConnections = options.maxConnections;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.path, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    async stop() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Every connection rolls back what it holds before PGlite may be closed.
      await Promise.all([...connections].map((c) => c.close()));
      await closed;
    },
  };
}

class Connection {
  /** Resolves once the socket is gone and the session holds nothing of this connection. */
  readonly closed: Promise<void>;
  private readonly id: number;
  private readonly socket: Socket;
  private readonly session: PgliteSessionQueue;
  private buffer: Buffer = Buffer.alloc(0);
  private started = false;
  private reading = false;
  private gone = false;
  private markClosed!: () => void;

  constructor(id: number, socket: Socket, session: PgliteSessionQueue) {
    this.id = id;
    this.socket = socket;
    this.session = session;
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      void this.read();
    });
    // A client that drops its connection (ECONNRESET, EPIPE) is a close like any other.
    socket.on('error', () => void this.close());
    socket.on('close', () => void this.close());
  }

  /** `last`: a final message for the client, sent before the socket closes. */
  async close(last?: Buffer): Promise<void> {
    if (!this.gone) {
      this.gone = true;
      if (last) this.socket.end(last);
      else this.socket.destroy();
      await this.session.disconnect(this.id);
      this.markClosed();
    }
    return this.closed;
  }

  /** Runs the complete messages in the buffer one after another; one reader at a time. */
  private async read(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      for (let next = this.nextMessage(); next && !this.gone; next = this.nextMessage()) {
        if (next === 'refuse-encryption') this.socket.write(REFUSE_ENCRYPTION);
        else if (next === 'close') await this.close();
        else await this.session.run(this.id, next.message, next.endsCycle, (data) => this.socket.write(Buffer.from(data)));
      }
    } catch (err) {
      // PGlite itself failed (a statement's error comes back as data): tell the client why, then hang up.
      await this.close(fatalError(`embedded Postgres failed: ${(err as Error).message}`));
    } finally {
      this.reading = false;
    }
  }

  /** Takes the next complete message off the buffer, or null when it is not all there yet. */
  private nextMessage(): { message: Buffer; endsCycle: boolean } | 'refuse-encryption' | 'close' | null {
    const b = this.buffer;
    if (!this.started) {
      if (b.length < 8) return null;
      const length = b.readInt32BE(0);
      const code = b.readInt32BE(4);
      if (length < 8 || length > MAX_STARTUP_LENGTH) return 'close';
      if (b.length < length) return null;
      this.buffer = b.subarray(length);
      if (code === SSL_REQUEST || code === GSSENC_REQUEST) return 'refuse-encryption';
      // A CancelRequest (PGlite has no other backend to signal: dropped, as Postgres drops
      // one it cannot match) or a protocol version other than 3.0.
      if (code !== PROTOCOL_3_0) return 'close';
      this.started = true;
      return { message: b.subarray(0, length), endsCycle: true };
    }
    if (b.length < 5) return null;
    const length = 1 + b.readInt32BE(1);
    if (length < 5) return 'close';
    if (b.length < length) return null;
    this.buffer = b.subarray(length);
    return { message: b.subarray(0, length), endsCycle: CYCLE_ENDS.has(b[0]!) };
  }
}

/** An ErrorResponse of severity FATAL, SQLSTATE XX000 (internal_error). */
function fatalError(message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0CXX000\0M${message}\0\0`);
  const head = Buffer.alloc(5);
  head[0] = 0x45; // 'E'
  head.writeInt32BE(4 + fields.length, 1);
  return Buffer.concat([head, fields]);
}
