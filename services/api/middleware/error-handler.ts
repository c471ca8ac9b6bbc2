import type { Context, Next } from 'koa';
import { ZodError } from 'zod';
import { AppError, isAppError } from '../../../shared/errors.ts';
import { isStoreUnavailable } from '../../../shared/store-unavailable.ts';
import { isConcurrencyFailure } from '../../../shared/db/postgres.ts';
import { zodDetails } from '../../../shared/schemas/validation.ts';
import { errorFields, type Logger } from '../../../shared/logger.ts';

/**
 * The one place errors become responses: every failure leaves in the error
 * envelope with a stable code. A store that cannot be reached is a 503 with
 * Retry-After; anything else not an AppError is a bug and a 500, logged with
 * its stack but never shown to the client.
 */
export function errorHandler(logger: Logger) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.body === undefined) {
        if (ctx.status === 404) throw new AppError('NOT_FOUND', `Route ${ctx.method} ${ctx.path} not found`);
        // The router's answers to a method the route lacks (its Allow header stays) or no route knows.
        if (ctx.status === 405) throw new AppError('METHOD_NOT_ALLOWED', 'Method not allowed on this route');
        if (ctx.status === 501) throw new AppError('METHOD_NOT_ALLOWED', 'Method not supported');
      }
    } catch (err) {
      const appError = toAppError(err);
      if (appError.code === 'INTERNAL_ERROR') {
        logger.error('unhandled error', { method: ctx.method, path: ctx.path, ...errorFields(err) });
      } else if (appError.code === 'SERVICE_UNAVAILABLE') {
        if (!isAppError(err)) logger.warn('store unavailable', { method: ctx.method, path: ctx.path, ...errorFields(err) });
        ctx.set('Retry-After', String(RETRY_AFTER_SECONDS));
      }
      ctx.status = appError.status;
      ctx.body = { success: false, error: appError.toJSON() };
    }
  };
}

/** What a 503 asks clients to wait: stores come back within seconds or stay down for long. */
const RETRY_AFTER_SECONDS = 5;

/** The client-facing error for what a request failed with: an AppError as it is, an outage a 503, a bug a 500. */
export function toAppError(err: unknown): AppError {
  if (isAppError(err)) return err;
  if (isStoreUnavailable(err)) return new AppError('SERVICE_UNAVAILABLE', 'A store this request needs is unreachable; retry shortly');
  // A transaction that kept losing to concurrent ones (the stores run such a change again
  // a few times first): nothing of it was done, and a retry may pass.
  if (isConcurrencyFailure(err)) return new AppError('SERVICE_UNAVAILABLE', 'Concurrent changes to the same records kept this one from completing; retry shortly');
  if (err instanceof ZodError) return new AppError('VALIDATION_ERROR', 'Invalid request', zodDetails(err));
  // Errors thrown by Koa and the router carry an HTTP status (e.g. 405 from allowedMethods).
  const status = (err as { status?: number }).status;
  if (status === 405) return new AppError('METHOD_NOT_ALLOWED', (err as Error).message || 'Method not allowed');
  if (status === 501) return new AppError('METHOD_NOT_ALLOWED', 'Method not implemented');
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'Request body too large');
  if (status !== undefined && status >= 400 && status < 500) return new AppError('VALIDATION_ERROR', (err as Error).message || 'Bad request');
  return new AppError('INTERNAL_ERROR', 'Internal server error');
}
