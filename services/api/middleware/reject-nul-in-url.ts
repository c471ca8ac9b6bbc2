import type { Context, Next } from 'koa';
import { AppError } from '../../../shared/errors.ts';

/** A NUL can only reach a path or query as %00; Postgres text cannot store it, so refuse it up front. */
export async function rejectNulInUrl(ctx: Context, next: Next): Promise<void> {
  if (/%00|\u0000/i.test(ctx.url)) {
    throw new AppError('VALIDATION_ERROR', 'The URL must not contain NUL characters (%00)');
  }
  return next();
}
