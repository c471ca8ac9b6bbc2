import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy that a test can cut and restore, to make a store unreachable
 * (as a failed network or a dead load balancer would) without touching the shared
 * server behind it. `cut()` closes the listener and destroys every connection;
 * `restore()` listens again on the same port. `stall()` holds what clients send, their
 * connections kept (a stalled path: nothing reaches the server, nothing is lost, the
 * server's answers still flow), until `unstall()` lets it through in order.
 * `stallOpen()` does so to the connections open now only, new ones pass (a path that lost
 * its connections' state, as after a failover behind a load balancer).
 * `loseReplies(ms)` loses what the server answers on the connections open now and
 * destroys them `ms` later (a reply lost on a failing network: the server ran what it
 * was sent, the client never hears, then its connection fails).
 */
export interface TcpProxy {
  readonly port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  stall(): void;
  stallOpen(): void;
  unstall(): void;
  loseReplies(ms: number): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  /** Each client connection's upstream, for stall() and unstall(). */
  const upstreams = new Map<Socket, Socket>();
  let server: Server | null = null;
  let port = 0;
  let stalled = false;
  /** The connections stallOpen() holds. */
  const held = new Set<Socket>();

  function track(socket: Socket): void {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  }

  function listen(): Promise<void> {
    const s = createServer((client) => {
      const upstream = connect(target.port, target.host);
      track(client);
      track(upstream);
      upstreams.set(client, upstream);
      client.once('close', () => {
        upstreams.delete(client);
        held.delete(client);
      });
      if (stalled) hold(client, upstream);
      else client.pipe(upstream);
      upstream.pipe(client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
    });
    server = s;
    return new Promise((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as { port: number }).port;
        resolve();
      });
    });
  }

  /** Unpiped and paused, a client's bytes wait in its socket's buffers. */
  function hold(client: Socket, upstream: Socket): void {
    if (held.has(client)) return;
    held.add(client);
    client.unpipe(upstream);
    client.pause();
  }

  async function cut(): Promise<void> {
    const s = server;
    server = null;
    for (const socket of sockets) socket.destroy();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  await listen();
  return {
    get port() {
      return port;
    },
    cut,
    restore: () => (server ? Promise.resolve() : listen()),
    stall() {
      if (stalled) return;
      stalled = true;
      for (const [client, upstream] of upstreams) hold(client, upstream);
    },
    stallOpen() {
      for (const [client, upstream] of upstreams) hold(client, upstream);
    },
    unstall() {
      stalled = false;
      // pipe() resumes the client: what it held goes first. Each held one once: a second
      // pipe() to the same upstream would send everything twice.
      for (const client of held) client.pipe(upstreams.get(client)!);
      held.clear();
    },
    loseReplies(ms) {
      for (const [client, upstream] of upstreams) {
        upstream.unpipe(client);
        // Read and dropped (unpipe paused it), so the server is never held up by a full buffer.
        upstream.on('data', () => undefined);
        upstream.resume();
        // The client's close takes the upstream connection with it (listen()).
        setTimeout(() => client.destroy(), ms);
      }
    },
    close: cut,
  };
}
