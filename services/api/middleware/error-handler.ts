import type { Context, Next } from 'koa';
import { ZodError } from 'zod';
import { AppError, isAppError } from '../../../shared/errors.ts';
import { zodDetails } from '../../../shared/schemas/validation.ts';
import { errorFields, type Logger } from '../../../shared/logger.ts';

/**
 * The one place errors become responses: every failure leaves in the error
 * envelope with a stable code. Anything not an AppError is a bug and a 500,
 * logged with its stack but never shown to the client.
 */
export function errorHandler(logger: Logger) {
  return async function handleErrors(ctx: Context, next: Next): Promise<void> {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new AppError('NOT_FOUND', `Route ${ctx.method} ${ctx.path} not found`);
      }
    } catch (err) {
      const appError = toAppError(err);
      if (appError.code === 'INTERNAL_ERROR') {
        logger.error('unhandled error', { method: ctx.method, path: ctx.path, ...errorFields(err) });
      }
      ctx.status = appError.status;
      ctx.body = { success: false, error: appError.toJSON() };
    }
  };
}

function toAppError(err: unknown): AppError {
  if (isAppError(err)) return err;
  if (err instanceof ZodError) return new AppError('VALIDATION_ERROR', 'Invalid request', zodDetails(err));
  // Errors thrown by Koa and the router carry an HTTP status (e.g. 405 from allowedMethods).
  const status = (err as { status?: number }).status;
  if (status === 405) return new AppError('METHOD_NOT_ALLOWED', (err as Error).message || 'Method not allowed');
  if (status === 501) return new AppError('METHOD_NOT_ALLOWED', 'Method not implemented');
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE', 'Request body too large');
  if (status !== undefined && status >= 400 && status < 500) return new AppError('VALIDATION_ERROR', (err as Error).message || 'Bad request');
  return new AppError('INTERNAL_ERROR', 'Internal server error');
}
