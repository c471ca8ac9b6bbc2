import { connect } from 'node:net';

/**
 * One HTTP/1.1 request written byte for byte on its own connection, for what fetch
 * will not send: no Content-Length, invalid bytes in the request line or headers,
 * oversized headers. The server's answer is read until it closes the connection.
 */
export interface RawRequest {
  method: string;
  /** Sent as is: may hold bytes fetch would encode or refuse. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  host?: string;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export function rawHttp(port: string | number, request: RawRequest | Uint8Array, timeoutMs = 10_000): Promise<RawResponse> {
  const bytes = request instanceof Uint8Array ? request : encode(request);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error(`no complete answer within ${timeoutMs} ms`)), timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (err) => {
      clearTimeout(timer);
      // A server may reset a connection it refused after answering: keep what it said.
      if (chunks.length > 0 && (err as NodeJS.ErrnoException).code === 'ECONNRESET') resolve(parse(Buffer.concat(chunks)));
      else reject(err);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      resolve(parse(Buffer.concat(chunks)));
    });
    socket.write(bytes);
  });
}

function encode(request: RawRequest): Buffer {
  const body = request.body === undefined ? Buffer.alloc(0) : Buffer.from(request.body);
  const lines = [`${request.method} ${request.path} HTTP/1.1`, `host: ${request.host ?? 'localhost'}`, 'connection: close'];
  for (const [name, value] of Object.entries(request.headers ?? {})) lines.push(`${name}: ${value}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
}

function parse(raw: Buffer): RawResponse {
  const end = raw.indexOf('\r\n\r\n');
  if (end === -1) throw new Error(`incomplete HTTP response: ${JSON.stringify(raw.subarray(0, 200).toString('latin1'))}`);
  const [statusLine, ...headerLines] = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1]);
  if (!Number.isInteger(status)) throw new Error(`not an HTTP status line: ${statusLine}`);
  const headers: Record<string, string> = {};
  for (const line of headerLines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = raw.subarray(end + 4);
  if (headers['transfer-encoding']?.toLowerCase() === 'chunked') body = dechunk(body);
  return { status, headers, body: body.toString('utf8') };
}

function dechunk(data: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const lineEnd = data.indexOf('\r\n', at);
    if (lineEnd === -1) break;
    const size = parseInt(data.subarray(at, lineEnd).toString('latin1'), 16);
    if (!Number.isFinite(size) || size === 0) break;
    parts.push(data.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
