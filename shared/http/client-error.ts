import { maxHeaderSize, STATUS_CODES, type IncomingMessage, type RequestListener, type Server, type ServerOptions, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { AppError } from '../errors.ts';

/**
 * Node's HTTP parser refuses some requests before any handler runs (headers over
 * `maxHeaderSize`, bytes that are not HTTP, a header timeout). Left to Node, the
 * client gets a bare status line with no body; every linkroute HTTP server answers
 * them instead with the error envelope, as it answers everything else. The same for
 * what Node answers on its own: CONNECT (it would close the connection) and an
 * `Expect` it cannot meet (417).
 */
export function answerClientErrors(server: Server): void {
  // The response each connection is writing, so a refused request behind it is not answered over it.
  const answering = new WeakMap<Duplex, ServerResponse>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    answering.set(req.socket, res);
    res.once('finish', () => {
      if (answering.get(req.socket) === res) answering.delete(req.socket);
    });
  });
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex) => answerClientError(err, socket, answering.get(socket)));
  // Without a listener Node closes a CONNECT's connection without a word.
  server.on('connect', (_req: unknown, socket: Duplex) => answerWith(socket, new AppError('METHOD_NOT_ALLOWED', 'CONNECT is not supported: this is not a proxy')));
  // An Expect other than 100-continue: Node's own 417 has no body.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    sendError(res, new AppError('EXPECTATION_FAILED', `Expect: ${req.headers.expect ?? ''} is not supported; only 100-continue is`));
  });
}

/**
 * Server options and a request listener that refuse an HTTP/1.1 request without
 * `Host` in the envelope: Node's own check (`requireHostHeader`) answers a bare 400.
 */
export const hostCheckedOptions: ServerOptions = { requireHostHeader: false };
export function requiringHost(listener: RequestListener): RequestListener {
  return (req, res) => {
    if (req.httpVersion === '1.1' && req.headers.host === undefined) sendError(res, new AppError('BAD_REQUEST', 'Malformed HTTP request: an HTTP/1.1 request needs a Host header'));
    else listener(req, res);
  };
}

function sendError(res: ServerResponse, error: AppError): void {
  const body = envelopeOf(error);
  res.writeHead(error.status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store', Connection: 'close' }).end(body);
}

const envelopeOf = (error: AppError): string => JSON.stringify({ success: false, error: error.toJSON() });

/** The error a refused request gets, by the parser's code (llhttp's `HPE_*`, or Node's own). */
export function clientErrorOf(err: Error & { code?: string; reason?: string }): AppError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return new AppError('REQUEST_HEADER_FIELDS_TOO_LARGE', `Request headers are too large: at most ${maxHeaderSize} bytes in all`);
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new AppError('PAYLOAD_TOO_LARGE', 'Chunk extensions are too large');
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new AppError('REQUEST_TIMEOUT', 'The request did not arrive in time');
    default:
      // llhttp's reasons are fixed texts ("Invalid method encountered"), never request bytes.
      return new AppError('BAD_REQUEST', `Malformed HTTP request${typeof err.reason === 'string' ? `: ${err.reason}` : ''}`);
  }
}

function answerClientError(err: Error & { code?: string }, socket: Duplex, inFlight: ServerResponse | undefined): void {
  // A reset connection, or one whose answer has already begun, has no one to answer:
  // writing then would corrupt the response in flight (as Node's own handler avoids).
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  answerWith(socket, clientErrorOf(err));
}

/** Writes `error` as a whole HTTP response straight to the socket, then closes it. */
function answerWith(socket: Duplex, error: AppError): void {
  const body = envelopeOf(error);
  const head = [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'Connection: close',
  ].join('\r\n');
  // The rest of what the client sends is not read: close once the answer is written.
  socket.end(`${head}\r\n\r\n${body}`, () => socket.destroy());
}
