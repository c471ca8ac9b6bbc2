import type { IncomingMessage } from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import { clickHouseException, ClickHouseException } from './clickhouse-exception.ts';
import { multipartBoundary, parseMultipart } from './multipart-form-data.ts';
import { protocolParams, queryParamPrefix } from './request-settings.ts';

/**
 * One query request of ClickHouse's HTTP interface, read off the wire:
 * the statement from the `query` URL parameter, the multipart `query` part or
 * the POST body; with a URL `query`, the body is the statement's continuation
 * (INSERT data) and is kept as bytes.
 */
export interface ClickHouseRequest {
  queryId: string | undefined;
  database: string;
  defaultFormat: string | undefined;
  query: string;
  /** Body following a URL `query`: INSERT data. Undefined when empty or when the body was the query. */
  data: Buffer | undefined;
  /** `param_<name>` values, as serialised text: the engine parses them by their declared type. */
  params: Record<string, string>;
  /** Every other non-protocol parameter: settings, still unfiltered. */
  settings: Map<string, string>;
}

export async function readClickHouseRequest(req: IncomingMessage, url: URL, maxBodyBytes: number): Promise<ClickHouseRequest> {
  if (url.searchParams.get('decompress') === '1' || url.searchParams.get('compress') === '1') {
    throw clickHouseException('NOT_IMPLEMENTED', "ClickHouse's native compression (compress/decompress=1) is not supported by the embedded endpoint; use HTTP Content-Encoding");
  }
  const fields: Array<[string, string]> = [...url.searchParams];
  let query = url.searchParams.get('query');
  let data: Buffer | undefined;

  if (req.method === 'POST') {
    const body = await readBody(req, maxBodyBytes);
    const boundary = multipartBoundary(req.headers['content-type']);
    if (boundary !== undefined) {
      for (const part of parseMultipart(body, boundary)) {
        if (part.filename !== undefined) {
          throw clickHouseException('NOT_IMPLEMENTED', `External tables (multipart file part '${part.name}') are not supported by the embedded endpoint`);
        }
        if (part.name === 'query') query = query ?? part.value.toString('utf8');
        else fields.push([part.name, part.value.toString('utf8')]);
      }
    } else if (query !== null) {
      data = body.length > 0 ? body : undefined;
    } else {
      query = body.toString('utf8');
    }
  }
  if (!query || query.trim() === '') throw clickHouseException('SYNTAX_ERROR', 'Empty query');

  const params: Record<string, string> = {};
  const settings = new Map<string, string>();
  for (const [name, value] of fields) {
    if (name.startsWith(queryParamPrefix)) params[name.slice(queryParamPrefix.length)] = value;
    else if (!protocolParams.has(name)) settings.set(name, value);
  }
  return {
    queryId: url.searchParams.get('query_id') || undefined,
    database: url.searchParams.get('database') || 'default',
    defaultFormat: url.searchParams.get('default_format') || undefined,
    query,
    data,
    params,
    settings,
  };
}

/**
 * The request body, decoded per Content-Encoding, as one Buffer that owns its
 * memory (so it can be moved to the chDB thread without a copy). With a known
 * length and no encoding it is filled in place; otherwise chunks are joined
 * once at the end.
 */
async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const encoding = (req.headers['content-encoding'] ?? '').trim().toLowerCase();
  const identity = encoding === '' || encoding === 'identity';
  const declared = Number(req.headers['content-length']);
  try {
    if (identity && req.headers['content-length'] !== undefined && Number.isSafeInteger(declared) && declared >= 0) {
      if (declared > maxBytes) throw tooLarge(maxBytes);
      // Node's parser delivers exactly Content-Length bytes, so this cannot overflow.
      const out = Buffer.allocUnsafeSlow(declared);
      let at = 0;
      await consume(req, (chunk) => {
        at += chunk.copy(out, at);
      });
      if (at !== declared) throw clickHouseException('UNSUPPORTED_METHOD', 'Request body shorter than its Content-Length');
      return out;
    }
    const source: Readable = identity ? req : pipeline(req, decoderFor(encoding), () => undefined);
    const chunks: Buffer[] = [];
    let total = 0;
    await consume(source, (chunk) => {
      total += chunk.length;
      if (total > maxBytes) throw tooLarge(maxBytes);
      chunks.push(chunk);
    });
    // allocUnsafeSlow, not Buffer.concat: a concat result may sit in the shared pool.
    const out = Buffer.allocUnsafeSlow(total);
    let at = 0;
    for (const chunk of chunks) at += chunk.copy(out, at);
    return out;
  } catch (err) {
    if (err instanceof ClickHouseException) throw err;
    throw clickHouseException('CANNOT_DECOMPRESS', `Cannot read the request body (Content-Encoding '${encoding || 'none'}'): ${(err as Error).message}`);
  }
}

/**
 * Feeds every chunk of `source` to `onChunk`. If `onChunk` throws, the rest of
 * the body is read and discarded (not destroyed) so the error can still be
 * answered on this connection.
 */
function consume(source: Readable, onChunk: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const onData = (chunk: Buffer) => {
      try {
        onChunk(chunk);
      } catch (err) {
        source.off('data', onData);
        source.resume();
        reject(err as Error);
      }
    };
    source.on('data', onData);
    source.once('end', () => resolve());
    source.once('error', reject);
  });
}

function decoderFor(encoding: string): Readable & NodeJS.WritableStream {
  switch (encoding) {
    case 'gzip':
    case 'x-gzip':
      return zlib.createGunzip();
    case 'deflate':
      return zlib.createInflate();
    case 'br':
      return zlib.createBrotliDecompress();
    case 'zstd': {
      // zlib has zstd from Node 22.15 on.
      const create = (zlib as unknown as { createZstdDecompress?: () => Readable & NodeJS.WritableStream }).createZstdDecompress;
      if (create) return create();
      break;
    }
  }
  throw clickHouseException('NOT_IMPLEMENTED', `Content-Encoding '${encoding}' is not supported by the embedded endpoint (gzip, deflate, br are)`);
}

function tooLarge(maxBytes: number) {
  return clickHouseException('QUERY_IS_TOO_LARGE', `Request body exceeds the embedded endpoint's limit of ${maxBytes} bytes`);
}
