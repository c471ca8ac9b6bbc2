import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import type { Logger } from '../../shared/logger.ts';
import { ClickHouseException, clickHouseException, fromEngineError } from './clickhouse-exception.ts';
import { EMBEDDED_USER, presentsPassword } from './credentials.ts';
import { readClickHouseRequest, type ClickHouseRequest } from './clickhouse-request.ts';
import type { EngineOutcome, EngineQueue, EngineCall } from './engine-queue.ts';
import { fileInsertShape, isBinaryFormat } from './insert-from-file.ts';
import type { SettingsPolicy } from './request-settings.ts';
import { isInsertWithFormat, isSessionOnlyStatement, trailingFormat } from './statement-text.ts';

/**
 * The HTTP side of the embedded endpoint: the subset of ClickHouse's HTTP
 * interface that @clickhouse/client uses, answered from the engine queue.
 *
 *   GET|HEAD /ping, /replicas_status, and / without a query  -> 200 "Ok.\n"
 *   GET|POST /?query=...  or POST / with the query as body   -> run it
 *
 * Responses carry X-ClickHouse-Query-Id, -Format, -Timezone, -Summary; errors
 * are ClickHouse's (see clickhouse-exception.ts). Results are produced whole by
 * the engine and sent with a Content-Length (like wait_end_of_query=1), so an
 * error is always a clean error response, never a cut-off body.
 */
export interface HandlerContext {
  queue: EngineQueue;
  policy: SettingsPolicy;
  timezone: string;
  maxBodyBytes: number;
  logger: Logger;
  /** The password every statement must come with (see credentials.ts); health checks need none. */
  password: string;
}

/** ClickHouse's HTTP default when neither the query nor `default_format` names one. */
const DEFAULT_FORMAT = 'TabSeparated';
const DISPLAY_NAME = 'linkroute-embedded-chdb';

export function createRequestHandler(ctx: HandlerContext): (req: IncomingMessage, res: ServerResponse) => void {
  const reportedSettings = new Set<string>();
  return (req, res) => {
    handle(ctx, reportedSettings, req, res).catch((err: unknown) => {
      ctx.logger.error('embedded ClickHouse request failed', { error: err instanceof Error ? err.message : String(err) });
      if (!res.headersSent) sendError(res, clickHouseException('STD_EXCEPTION', 'Internal error of the embedded endpoint'), undefined);
      else res.destroy();
    });
  };
}

async function handle(ctx: HandlerContext, reportedSettings: Set<string>, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://embedded');
  const method = req.method ?? 'GET';
  if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') {
    sendError(res, clickHouseException('UNSUPPORTED_METHOD', `HTTP method ${method} is not supported`), undefined);
    return;
  }
  const health = url.pathname === '/ping' || url.pathname === '/replicas_status' || (url.pathname === '/' && method !== 'POST' && !url.searchParams.has('query'));
  if (health) {
    if (ctx.queue.alive) sendText(res, 200, 'Ok.\n', method === 'HEAD');
    else sendError(res, clickHouseException('ABORTED', 'The embedded ClickHouse engine is not running'), undefined);
    return;
  }
  if (url.pathname !== '/') {
    sendText(res, 404, `There is no handle ${url.pathname}\n\nUse / or /ping for health checks.\n`, false);
    return;
  }
  if (!presentsPassword(req, url, ctx.password)) {
    sendError(res, clickHouseException('AUTHENTICATION_FAILED', `${EMBEDDED_USER}: Authentication failed: password is incorrect, or there is no user with such name`), undefined);
    return;
  }

  let queryId: string | undefined;
  try {
    const request = await readClickHouseRequest(req, url, ctx.maxBodyBytes);
    queryId = request.queryId ?? randomUUID();
    const { apply, ignored, unenforced } = ctx.policy.split(request.settings);
    for (const name of ignored) {
      if (reportedSettings.has(name)) continue;
      reportedSettings.add(name);
      ctx.logger.warn('embedded ClickHouse ignores a setting chDB does not know', { setting: name });
    }
    for (const name of unenforced) {
      if (reportedSettings.has(name)) continue;
      reportedSettings.add(name);
      ctx.logger.info('embedded ClickHouse does not apply a setting: its one engine connection is shared by every request', { setting: name });
    }
    const encoding = request.settings.get('enable_http_compression') === '1' ? pickEncoding(req.headers['accept-encoding']) : undefined;
    const format = trailingFormat(request.query) ?? request.defaultFormat ?? DEFAULT_FORMAT;

    const call = toEngineCall(request, format);
    let outcome: EngineOutcome | null = null;
    if (call) {
      // The client going away cancels its statement (dropped if queued, killed if a running query).
      // A client gone already (its 'close' came while the request was read, before this listener) is not run.
      const abort = new AbortController();
      const gone = () => {
        if (!res.writableFinished) abort.abort();
      };
      if (res.destroyed) gone();
      else res.once('close', gone);
      outcome = await ctx.queue.run({ call, settings: apply, database: request.database, signal: abort.signal });
    }
    if (res.destroyed) return;

    const body = outcome?.kind === 'query' ? Buffer.from(outcome.reply.bytes.buffer, outcome.reply.bytes.byteOffset, outcome.reply.bytes.byteLength) : Buffer.alloc(0);
    const headers: Record<string, string> = {
      'X-ClickHouse-Query-Id': queryId,
      'X-ClickHouse-Format': format,
      'X-ClickHouse-Timezone': ctx.timezone,
      'X-ClickHouse-Server-Display-Name': DISPLAY_NAME,
      'X-ClickHouse-Summary': JSON.stringify(summaryOf(outcome, body.length)),
      'Content-Type': contentTypeOf(format),
    };
    let payload = body;
    if (encoding && body.length > 0) {
      payload = await compress(encoding, body);
      headers['Content-Encoding'] = encoding;
      headers.Vary = 'Accept-Encoding';
    }
    headers['Content-Length'] = String(payload.length);
    res.writeHead(200, headers);
    res.end(method === 'HEAD' ? undefined : payload);
  } catch (err) {
    if (res.destroyed) return;
    sendError(res, toClickHouseException(err), queryId);
  }
}

/** What to hand the engine; null when the request is answered without it. */
function toEngineCall(request: ClickHouseRequest, format: string): EngineCall | null {
  const { query, data, params } = request;
  const hasParams = Object.keys(params).length > 0;
  if (data === undefined) {
    if (isSessionOnlyStatement(query)) return null;
    // An INSERT whose data stream turned out empty inserts nothing, as on a server.
    if (isInsertWithFormat(query)) return null;
    return { kind: 'query', sql: query, format, params: hasParams ? params : undefined };
  }
  // The raw path hands the bytes to the engine as they are; it takes no query parameters.
  if (isInsertWithFormat(query) && !hasParams) {
    if (isBinaryFormat(format) ? data.length === 0 : isBlank(data)) return null;
    const fromFile = fileInsertShape(query);
    return fromFile ? { kind: 'insert-from-file', insert: fromFile, data } : { kind: 'insert', prefix: query, data };
  }
  // Anything else with a body: the body continues the query text, as on a server.
  return { kind: 'query', sql: `${query}\n${data.toString('utf8')}`, format, params: hasParams ? params : undefined };
}

function isBlank(data: Buffer): boolean {
  for (const byte of data) if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return false;
  return true;
}

/** X-ClickHouse-Summary: every value a decimal string, as ClickHouse sends it. */
function summaryOf(outcome: EngineOutcome | null, resultBytes: number): Record<string, string> {
  const query = outcome?.kind === 'query' ? outcome.reply : undefined;
  const insert = outcome?.kind === 'insert' ? outcome.reply : undefined;
  const elapsed = outcome?.reply.elapsedSeconds ?? 0;
  return {
    read_rows: String(query?.rowsRead ?? insert?.rowsWritten ?? 0),
    read_bytes: String(query?.bytesRead ?? insert?.bytesWritten ?? 0),
    written_rows: String(insert?.rowsWritten ?? 0),
    written_bytes: String(insert?.bytesWritten ?? 0),
    total_rows_to_read: String(query?.rowsRead ?? 0),
    result_rows: String(query?.rowsRead ?? 0),
    result_bytes: String(resultBytes),
    elapsed_ns: String(Math.round(elapsed * 1e9)),
  };
}

function contentTypeOf(format: string): string {
  if (/^JSON.*EachRow/i.test(format)) return 'application/x-ndjson; charset=UTF-8';
  if (/^JSON/i.test(format)) return 'application/json; charset=UTF-8';
  if (/^CSV/i.test(format)) return 'text/csv; charset=UTF-8';
  if (/^(TabSeparated|TSV)/i.test(format)) return 'text/tab-separated-values; charset=UTF-8';
  return 'text/plain; charset=UTF-8';
}

type Encoding = 'gzip' | 'deflate' | 'br';

/** The first encoding of Accept-Encoding that we can produce; none means an uncompressed answer. */
function pickEncoding(accept: string | undefined): Encoding | undefined {
  for (const item of (accept ?? '').split(',')) {
    const name = item.split(';')[0]!.trim().toLowerCase();
    if (name === 'gzip' || name === 'deflate' || name === 'br') return name;
  }
  return undefined;
}

const compressors: Record<Encoding, (buf: Buffer) => Promise<Buffer>> = {
  gzip: promisify(zlib.gzip),
  deflate: promisify(zlib.deflate),
  br: promisify(zlib.brotliCompress),
};

function compress(encoding: Encoding, body: Buffer): Promise<Buffer> {
  return compressors[encoding](body);
}

function toClickHouseException(err: unknown): ClickHouseException {
  if (err instanceof ClickHouseException) return err;
  return fromEngineError(err instanceof Error ? err.message : String(err));
}

function sendError(res: ServerResponse, err: ClickHouseException, queryId: string | undefined): void {
  const body = Buffer.from(err.body);
  const headers: Record<string, string> = {
    'X-ClickHouse-Exception-Code': String(err.code),
    'X-ClickHouse-Server-Display-Name': DISPLAY_NAME,
    'Content-Type': 'text/plain; charset=UTF-8',
    'Content-Length': String(body.length),
  };
  if (queryId) headers['X-ClickHouse-Query-Id'] = queryId;
  res.writeHead(err.httpStatus, headers);
  res.end(body);
}

function sendText(res: ServerResponse, status: number, text: string, headOnly: boolean): void {
  const body = Buffer.from(text);
  res.writeHead(status, { 'Content-Type': 'text/html; charset=UTF-8', 'Content-Length': String(body.length) });
  res.end(headOnly ? undefined : body);
}
