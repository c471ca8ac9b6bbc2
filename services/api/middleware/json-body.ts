import type { Context, Next } from 'koa';
import { AppError } from '../../../shared/errors.ts';

/** DELETE too: bulk deletes name their links in a body. */
const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

interface BodyState {
  readJsonBody?: () => Promise<unknown>;
}

/**
 * Arms a lazy JSON body reader for POST, PUT, PATCH and DELETE. Handlers read the
 * body with `bodyOf(ctx)` after authentication, so an unauthenticated request is a
 * 401 whatever it sent. The body must be a JSON object: other content types,
 * malformed JSON and non-objects are 400s; more than `maxBytes` (or what
 * `maxBytesFor` allows the request, e.g. a bulk route) is a 413 and is never
 * buffered whole.
 */
export function jsonBody(maxBytes: number, maxBytesFor: (ctx: Context) => number | undefined = () => undefined) {
  return async function armJsonBody(ctx: Context, next: Next): Promise<void> {
    if (METHODS_WITH_BODY.has(ctx.method)) {
      let pending: Promise<unknown> | undefined;
      (ctx.state as BodyState).readJsonBody = () => (pending ??= readJson(ctx, maxBytesFor(ctx) ?? maxBytes));
    }
    return next();
  };
}

export async function bodyOf(ctx: Context): Promise<unknown> {
  const read = (ctx.state as BodyState).readJsonBody;
  if (!read) throw new Error('bodyOf called on a route without the jsonBody middleware');
  return read();
}

async function readJson(ctx: Context, maxBytes: number): Promise<unknown> {
  if (!ctx.is('application/json')) {
    throw new AppError('VALIDATION_ERROR', 'Content-Type must be application/json', [
      { path: '(headers).content-type', message: `expected application/json, got ${ctx.get('content-type') || 'nothing'}` },
    ]);
  }
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > maxBytes) throw new AppError('PAYLOAD_TOO_LARGE', `Request body exceeds ${maxBytes} bytes`);
  const text = await readText(ctx, maxBytes);
  if (text.trim() === '') throw new AppError('VALIDATION_ERROR', 'Request body is empty; expected a JSON object');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new AppError('VALIDATION_ERROR', `Malformed JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new AppError('VALIDATION_ERROR', 'Request body must be a JSON object');
  }
  const nulAt = findNul(parsed, '');
  if (nulAt !== null) throw new AppError('VALIDATION_ERROR', 'Invalid request', [{ path: nulAt || '(root)', message: 'must not contain NUL characters' }]);
  return parsed;
}

/**
 * Postgres text cannot hold U+0000, so a NUL anywhere would fail deep in a
 * query as a 500; refuse it here with the path of the first offending string.
 */
function findNul(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (typeof value !== 'object' || value === null) return null;
  for (const [key, child] of Object.entries(value)) {
    const childPath = path ? `${path}.${key}` : key;
    if (key.includes('\u0000')) return childPath;
    const found = findNul(child, childPath);
    if (found !== null) return found;
  }
  return null;
}

async function readText(ctx: Context, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new AppError('PAYLOAD_TOO_LARGE', `Request body exceeds ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new AppError('VALIDATION_ERROR', 'Request body is not valid UTF-8');
  }
}
