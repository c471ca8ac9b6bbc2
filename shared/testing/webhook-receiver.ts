import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  /** The request's path (and query). */
  path: string;
  headers: Record<string, string>;
  body: string;
  /** Epoch ms when it arrived. */
  at: number;
}

/**
 * A loopback HTTP server standing in for a customer's webhook endpoint: records
 * every request and answers what `answer` says (default 200), after `delayMs` (a
 * number, or one per request: endpoints on one host answering at their own pace).
 */
export interface WebhookReceiver {
  url: string;
  readonly received: ReceivedWebhook[];
  answer: (request: ReceivedWebhook, index: number) => number;
  delayMs: number | ((request: ReceivedWebhook) => number);
  close(): Promise<void>;
}

export async function startWebhookReceiver(answer: WebhookReceiver['answer'] = () => 200): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const receiver = { received, answer, delayMs: 0 } as WebhookReceiver;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const request: ReceivedWebhook = {
        path: req.url ?? '',
        headers: Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)])),
        body: Buffer.concat(chunks).toString('utf8'),
        at: Date.now(),
      };
      received.push(request);
      const status = receiver.answer(request, received.length - 1);
      const delay = typeof receiver.delayMs === 'number' ? receiver.delayMs : receiver.delayMs(request);
      setTimeout(() => res.writeHead(status, { 'content-type': 'text/plain' }).end('ok'), delay);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  return receiver;
}
