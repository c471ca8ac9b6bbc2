import type { Context, Next } from 'koa';
import { Counter, Histogram, type Registry } from 'prom-client';

/** Seconds; API requests run from a millisecond (health) to seconds (analytics over large ranges). */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface RouteLayer {
  path: string | RegExp;
  methods: string[];
}

/**
 * The route template a request was served by (`/links/:id`), never its raw path, so
 * label values stay a fixed, small set. @koa/router leaves every layer whose path
 * matched in ctx.matched, in registration order; the first one with the request's
 * method is the one that answered (later ones, e.g. `/analytics/:linkId` for
 * `/analytics/clicks`, only run if it passes on). A path that matched with no layer
 * for its method (a 405) still names its route; anything else is "unmatched".
 */
export function routeTemplate(ctx: Context): string {
  const matched = (ctx as { matched?: RouteLayer[] }).matched;
  if (matched === undefined) return 'unmatched';
  let pathOnly: string | undefined;
  for (const layer of matched) {
    if (layer.methods.length === 0) continue; // router.use() middleware, not a route
    if (layer.methods.includes(ctx.method)) return String(layer.path);
    pathOnly ??= String(layer.path);
  }
  return pathOnly ?? 'unmatched';
}

/**
 * Counts every request by method, route template and final status, and times it.
 * Mounted outermost, so the status is the one the error handler settled on.
 */
export function requestMetrics(registry: Registry) {
  const requests = new Counter({
    name: 'linkroute_api_http_requests_total',
    help: 'API requests by method, route template and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'linkroute_api_http_request_duration_seconds',
    help: 'API request duration by method and route template, until the response body is set',
    labelNames: ['method', 'route'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  return async function measure(ctx: Context, next: Next): Promise<void> {
    const started = performance.now();
    try {
      await next();
    } finally {
      const route = routeTemplate(ctx);
      requests.inc({ method: ctx.method, route, status: String(ctx.status) });
      duration.observe({ method: ctx.method, route }, (performance.now() - started) / 1000);
    }
  };
}
