import type Router from '@koa/router';
import type { Registry } from 'prom-client';
import { METRICS_CONTENT_TYPE } from '../../../shared/metrics/metrics-registry.ts';

/**
 * `/metrics`: Prometheus text format, public like /health (no key, never rate
 * limited: a scraper must not spend a workspace's plan, nor be refused by it).
 */
export function metricsRoutes(router: Router, deps: { registry: Registry }): void {
  router.get('/metrics', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    ctx.type = METRICS_CONTENT_TYPE;
    ctx.body = await deps.registry.metrics();
  });
}
