/**
 * Customers' webhook endpoints for the webhooks benchmark: RECEIVERS loopback HTTP
 * servers answering 204 to every POST. Each delivery's latency is its arrival time
 * minus the `sentAt` (epoch ms) its body carries (same machine, same clock). Every
 * 50th delivery's signature is checked with the standardwebhooks package against
 * the endpoint's secret (SECRETS: a JSON array, one per receiver). A control server
 * answers GET /stats: {received, unique, badSignatures, p50, p99, max} (ms).
 * Prints `READY <control port> <port,port,...>`; exits on SIGTERM.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';

const secrets = JSON.parse(process.env.SECRETS ?? '[]') as string[];
const verifiers = secrets.map((s) => new Webhook(s));
const latencies: number[] = [];
const seen = new Set<string>();
let received = 0;
let badSignatures = 0;

function listen(server: Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

const ports: number[] = [];
for (const [index, verifier] of verifiers.entries()) {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const arrived = Date.now();
      const body = Buffer.concat(chunks).toString('utf8');
      received++;
      const id = String(req.headers['webhook-id']);
      seen.add(`${index}/${id}`);
      const sentAt = (JSON.parse(body) as { data: { sentAt: number } }).data.sentAt;
      latencies.push(arrived - sentAt);
      if (received % 50 === 0) {
        try {
          verifier.verify(body, req.headers as Record<string, string>);
        } catch (err) {
          if (!(err instanceof WebhookVerificationError)) throw err;
          badSignatures++;
        }
      }
      res.writeHead(204).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  ports.push(await listen(server));
}

const pick = (sorted: number[], q: number) => (sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!);
const control = createServer((req, res) => {
  if (req.url === '/reset') {
    latencies.length = 0;
    seen.clear();
    received = 0;
    badSignatures = 0;
    return res.writeHead(204).end();
  }
  const sorted = [...latencies].sort((a, b) => a - b);
  res.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({ received, unique: seen.size, badSignatures, p50: pick(sorted, 0.5), p99: pick(sorted, 0.99), max: sorted.at(-1) ?? 0 }),
  );
});
process.stdout.write(`READY ${await listen(control)} ${ports.join(',')}\n`);
process.once('SIGTERM', () => process.exit(0));
