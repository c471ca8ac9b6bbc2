import type { Context, Next } from 'koa';
import type { Logger } from '../../../shared/logger.ts';
import { ClientClosedRequest } from './client-closed.ts';

/**
 * The status a request abandoned by its client ends with (nginx's "499 Client Closed
 * Request"): never sent, as there is no one to send it to, but what request metrics
 * count, a 4xx (the client's doing), not a 5xx.
 */
export const CLIENT_CLOSED_STATUS = 499;

const signals = new WeakMap<Context, AbortSignal>();

/**
 * The request's abort signal, one per request, made on first use: it aborts when the
 * client closes the connection before the response is written (a response written in
 * full closes too, finished: no abort). A client already gone aborts it at once.
 */
export function requestSignal(ctx: Context): AbortSignal {
  const made = signals.get(ctx);
  if (made) return made;
  const controller = new AbortController();
  const abandoned = () => {
    if (!ctx.res.writableFinished) controller.abort();
  };
  if (ctx.res.destroyed) abandoned();
  else ctx.res.once('close', abandoned);
  signals.set(ctx, controller.signal);
  return controller.signal;
}

/**
 * Middleware of every analytics route: makes the request's signal before the route
 * runs (its ClickHouse calls take it: untilClientCloses), and ends a request its
 * client abandoned quietly. ClientClosedRequest is thrown only once the client is
 * gone, so nothing is written (the socket is closed) and nothing reaches the error
 * handler, which would log it as a 500 or, for a read the abort cut short, as
 * ClickHouse unreachable. Any other error passes on as before.
 */
export function endWhenClientCloses(logger: Logger) {
  return async function whileClientConnected(ctx: Context, next: Next): Promise<void> {
    const signal = requestSignal(ctx);
    const abandoned = () => {
      ctx.status = CLIENT_CLOSED_STATUS;
      ctx.respond = false;
      logger.debug('analytics request abandoned: the client closed the connection', { method: ctx.method, path: ctx.path });
    };
    try {
      await next();
    } catch (err) {
      if (!(err instanceof ClientClosedRequest)) throw err;
      return abandoned();
    }
    // Gone during a Postgres step or after the last statement: the route answered, to no one.
    if (signal.aborted && !ctx.headerSent) abandoned();
  };
}
