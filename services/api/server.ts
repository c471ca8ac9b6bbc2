import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import { answerClientErrors, hostCheckedOptions, requiringHost } from '../../shared/http/client-error.ts';

export interface RunningServer {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

export function listen(app: Koa, port: number, host: string): Promise<RunningServer> {
  const server = createServer(hostCheckedOptions, requiringHost(app.callback()));
  // Behind load balancers keep-alive must outlive theirs; and never hang on slow headers.
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  answerClientErrors(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const { port: bound } = server.address() as AddressInfo;
      const shownHost = host.includes(':') ? `[${host}]` : host;
      resolve({
        url: `http://${shownHost}:${bound}`,
        port: bound,
        server,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            // close() lets requests in flight finish, but leaves their keep-alive
            // connections open until keepAliveTimeout (65 s): past any shutdown deadline.
            // So connections are closed as soon as they fall idle: now, and every 50 ms.
            server.closeIdleConnections();
            const sweep = setInterval(() => server.closeIdleConnections(), 50);
            server.once('close', () => clearInterval(sweep));
          }),
      });
    });
  });
}
