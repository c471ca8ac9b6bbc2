import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { Registry } from 'prom-client';
import { errorFields, type Logger } from '../../../shared/logger.ts';
import { METRICS_CONTENT_TYPE } from '../../../shared/metrics/metrics-registry.ts';
import { internalErrorPage } from '../pages/html-pages.ts';
import { sendPage } from '../pages/responses.ts';

/**
 * `GET /metrics`: the registry renders asynchronously (collect callbacks may await),
 * so, as uWS requires, the abort is watched from the start and the answer is written
 * corked, and only when the client is still there.
 */
export function createMetricsHandler(registry: Registry, logger: Logger): (res: HttpResponse, req: HttpRequest) => void {
  return (res) => {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    registry.metrics().then(
      (text) => {
        if (aborted) return;
        res.cork(() => {
          res.writeStatus('200 OK').writeHeader('Content-Type', METRICS_CONTENT_TYPE).writeHeader('Cache-Control', 'no-store').end(text);
        });
      },
      (err: unknown) => {
        logger.error('metrics failed', errorFields(err));
        if (aborted) return;
        res.cork(() => sendPage(res, internalErrorPage, false));
      },
    );
  };
}
