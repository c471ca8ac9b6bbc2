import type { Context, Next } from 'koa';
import type { IncomingMessage } from 'node:http';
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
  // Without Content-Length or Transfer-Encoding there is no body, and ctx.is() answers null whatever the type.
  if (!hasBody(ctx.req)) throw new AppError('VALIDATION_ERROR', 'Request body is empty; expected a JSON object');
  const contentTypeError = (message: string) => new AppError('VALIDATION_ERROR', 'Content-Type must be application/json', [{ path: '(headers).content-type', message }]);
  if (!ctx.is('application/json')) throw contentTypeError(`expected application/json, got ${ctx.get('content-type') || 'nothing'}`);
  // JSON is UTF-8 (RFC 8259): a body said to be in another charset would be read wrongly.
  const charset = ctx.request.charset.toLowerCase();
  if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') throw contentTypeError(`JSON is UTF-8 (RFC 8259), not charset=${ctx.request.charset}`);
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > maxBytes) throw new AppError('PAYLOAD_TOO_LARGE', `Request body exceeds ${maxBytes} bytes`);
  const text = await readText(ctx, maxBytes);
  if (text.trim() === '') throw new AppError('VALIDATION_ERROR', 'Request body is empty; expected a JSON object');
  if (nestingDepth(text) > MAX_JSON_DEPTH) {
    throw new AppError('VALIDATION_ERROR', `Request body is nested more than ${MAX_JSON_DEPTH} levels deep`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new AppError('VALIDATION_ERROR', `Malformed JSON: ${(err as Error).message}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new AppError('VALIDATION_ERROR', 'Request body must be a JSON object');
  }
  const bad = findBadText(parsed);
  if (bad !== null) throw new AppError('VALIDATION_ERROR', 'Invalid request', [{ path: bad.path || '(root)', message: bad.message }]);
  return parsed;
}

/**
 * Deeper than any body of this API (rule conditions are 3 levels). Checked on the
 * text before parsing, so no code ever walks request data deeper than this.
 */
export const MAX_JSON_DEPTH = 32;

/** The deepest nesting of `[`/`{` outside strings; one pass, no recursion. */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return deepest;
}

/**
 * A lone UTF-16 surrogate (`"\ud800"` in the JSON text: no UTF-8 can spell it, so
 * Postgres' json and text refuse it, and I-JSON, RFC 7493, forbids it) or a NUL.
 */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The first string or key (in document order) holding a NUL or a lone surrogate, with
 * its path and what is wrong, or null. The whole request is refused: it is not text
 * any store of ours can hold (a bulk request's other items included, as for any
 * body that is not valid JSON).
 */
function findBadText(root: unknown): { path: string; message: string } | null {
  const stack: Array<{ value: unknown; path: string; key: string; parent: string }> = [{ value: root, path: '', key: '', parent: '' }];
  const wrong = (text: string): string | null =>
    text.includes('\u0000') ? 'must not contain NUL characters' : LONE_SURROGATE.test(text) ? 'must not contain a lone UTF-16 surrogate (a \\ud800-\\udfff escape outside a pair): it is not valid Unicode' : null;
  while (stack.length > 0) {
    const { value, path, key, parent } = stack.pop()!;
    // A key that is not text is named by where it is: its own name could not be shown.
    const inKey = wrong(key);
    if (inKey !== null) return { path: parent, message: `a key ${inKey}` };
    if (typeof value === 'string') {
      const inValue = wrong(value);
      if (inValue !== null) return { path, message: inValue };
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    // Pushed last to first, so the first offending field in document order is found first.
    const entries = Object.entries(value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [childKey, child] = entries[i]!;
      stack.push({ value: child, path: path ? `${path}.${childKey}` : childKey, key: childKey, parent: path });
    }
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
  } catch (err) {
    // A fatal decoder throws a TypeError (ERR_ENCODING_INVALID_ENCODED_DATA) on bad bytes.
    if (err instanceof TypeError) throw new AppError('VALIDATION_ERROR', 'Request body is not valid UTF-8');
    throw err;
  }
}

/** type-is's rule: a request has a body when it declares one by either header. */
function hasBody(req: IncomingMessage): boolean {
  return req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] !== undefined;
}
