import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A loopback TCP proxy that a test can cut and restore, to make a store unreachable
 * (as a failed network or a dead load balancer would) without touching the shared
 * server behind it. `cut()` closes the listener and destroys every connection;
 * `restore()` listens again on the same port.
 */
export interface TcpProxy {
  readonly port: number;
  cut(): Promise<void>;
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;

  function track(socket: Socket): void {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  }

  function listen(): Promise<void> {
    const s = createServer((client) => {
      const upstream = connect(target.port, target.host);
      track(client);
      track(upstream);
      client.pipe(upstream);
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
    close: cut,
  };
}
