import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { CheckResult } from './dependency-checks.ts';
import { AppError } from '../errors.ts';
import { answerClientErrors, hostCheckedOptions, requiringHost } from '../http/client-error.ts';
import { errorFields, type Logger } from '../logger.ts';
import { METRICS_CONTENT_TYPE } from '../metrics/metrics-registry.ts';

/**
 * A small server for orchestrators and Prometheus only: the whole HTTP side of the
 * services that take no requests of their own (the ingester, the webhooks sender), and
 * the admin port (ADMIN_PORT) of those that do (the redirector, the API):
 *   GET|HEAD /health   200 while the process runs
 *   GET|HEAD /ready    200 when every check but the optional ones is ok, else 503;
 *                      the checks (and any details) in the body
 *   GET      /metrics  Prometheus text format
 */
export interface HealthServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface HealthServerDeps {
  port: number;
  host: string;
  registry: Pick<Registry, 'metrics'>;
  /** The checks /ready runs on each request: 'ok', or what is wrong. */
  checks(): Promise<Record<string, CheckResult | string>>;
  /** Checks reported but not deciding /ready: what the service keeps working without. */
  optional?: readonly string[];
  /** More fields of /ready's body, read on each request (the redirector: links held). */
  details?: () => Record<string, unknown>;
  logger: Logger;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' }).end(JSON.stringify(body));
}

/** Failures in the same envelope and codes as every other linkroute endpoint. */
function sendError(res: ServerResponse, error: AppError): void {
  sendJson(res, error.status, { success: false, error: error.toJSON() });
}

export function startHealthServer(deps: HealthServerDeps): Promise<HealthServer> {
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?', 1)[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      sendError(res, new AppError('METHOD_NOT_ALLOWED', `${req.method} is not allowed here; use GET or HEAD`));
      return;
    }
    if (path === '/health') {
      sendJson(res, 200, { status: 'ok' });
    } else if (path === '/ready') {
      const checks = await deps.checks();
      const ready = Object.entries(checks).every(([name, state]) => state === 'ok' || deps.optional?.includes(name));
      sendJson(res, ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', ...deps.details?.(), checks });
    } else if (path === '/metrics') {
      const text = await deps.registry.metrics();
      res.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE, 'Cache-Control': 'no-store' }).end(text);
    } else {
      sendError(res, new AppError('NOT_FOUND', `No such endpoint: ${path}`));
    }
  }

  const server = createServer(
    hostCheckedOptions,
    requiringHost((req, res) => {
      handle(req, res).catch((err: unknown) => {
        deps.logger.error('health server request failed', { path: req.url, ...errorFields(err) });
        if (!res.headersSent) sendError(res, new AppError('INTERNAL_ERROR', 'Internal error'));
        else res.destroy();
      });
    }),
  );
  // Probes and scrapes are short; never hold a socket for a slow client.
  server.requestTimeout = 10_000;
  server.headersTimeout = 10_000;
  answerClientErrors(server);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(deps.port, deps.host, () => {
      const { port } = server.address() as AddressInfo;
      const shownHost = deps.host.includes(':') ? `[${deps.host}]` : deps.host;
      resolve({
        url: `http://${shownHost}:${port}`,
        port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
