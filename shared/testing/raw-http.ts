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
  return rawExchange(port, request, timeoutMs).then((answer) => {
    if (answer === 'timeout') throw new Error(`no complete answer within ${timeoutMs} ms`);
    if (answer === 'closed') throw new Error('the server closed the connection without an answer');
    return answer;
  });
}

/**
 * The same, for a server that may refuse a request without answering (uWS closes
 * the connection on what it cannot parse, or waits for its idle timeout): `closed`
 * when it closed (or reset) the connection before a byte came back, `timeout` when
 * nothing came back within `timeoutMs`.
 */
export function rawExchange(port: string | number, request: RawRequest | Uint8Array, timeoutMs = 10_000): Promise<RawResponse | 'closed' | 'timeout'> {
  const bytes = request instanceof Uint8Array ? request : encode(request);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    const chunks: Buffer[] = [];
    const settle = (answer: () => RawResponse | 'closed' | 'timeout') => {
      clearTimeout(timer);
      socket.destroy();
      try {
        resolve(answer());
      } catch (err) {
        reject(err);
      }
    };
    const received = () => (chunks.length === 0 ? 'closed' : parse(Buffer.concat(chunks)));
    const timer = setTimeout(() => settle(() => (chunks.length === 0 ? 'timeout' : parse(Buffer.concat(chunks)))), timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (err) => {
      // A server may reset a connection it refused, after answering or instead of it:
      // keep what it said. The write side fails too when it stops reading (EPIPE).
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ECONNRESET' || code === 'EPIPE') settle(received);
      else settle(() => {
        throw err;
      });
    });
    socket.on('end', () => settle(received));
    socket.write(bytes);
  });
}

/**
 * A request byte for byte, nothing added: the method, target and header values may
 * hold any bytes, names may repeat. Give `content-length` yourself when there is a body.
 */
export function wireRequest(method: string | Uint8Array, target: string | Uint8Array, headers: ReadonlyArray<readonly [string, string | Uint8Array]>, body?: Uint8Array, version = 'HTTP/1.1'): Buffer {
  const bytes = (part: string | Uint8Array) => (typeof part === 'string' ? Buffer.from(part, 'latin1') : Buffer.from(part));
  const parts: Buffer[] = [bytes(method), Buffer.from(' '), bytes(target), Buffer.from(` ${version}\r\n`)];
  for (const [name, value] of headers) parts.push(Buffer.from(`${name}: `, 'latin1'), bytes(value), Buffer.from('\r\n'));
  parts.push(Buffer.from('\r\n'));
  if (body !== undefined) parts.push(Buffer.from(body));
  return Buffer.concat(parts);
}

function encode(request: RawRequest): Buffer {
  const body = request.body === undefined ? Buffer.alloc(0) : Buffer.from(request.body);
  const lines = [`${request.method} ${request.path} HTTP/1.1`, `host: ${request.host ?? 'localhost'}`, 'connection: close'];
  for (const [name, value] of Object.entries(request.headers ?? {})) lines.push(`${name}: ${value}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), body]);
}

function parse(raw: Buffer): RawResponse {
  // Interim answers (100 Continue) come before the real one.
  while (/^HTTP\/1\.[01] 1\d\d /.test(raw.subarray(0, 13).toString('latin1'))) {
    const interimEnd = raw.indexOf('\r\n\r\n');
    if (interimEnd === -1) break;
    raw = raw.subarray(interimEnd + 4);
  }
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
