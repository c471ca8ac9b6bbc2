/**
 * Webhook fan-out: EVENTS_PER_SECOND link events a second for SECONDS seconds, each
 * to ENDPOINTS endpoints (loopback receivers in their own process), through the
 * webhooks service as production runs it: events on the JetStream subject the API's
 * outbox publishes to, SENDERS sender processes (services/webhooks/main.ts) sharing
 * the durable consumer, a delivery per (event, endpoint) stored in Postgres, signed
 * (Standard Webhooks) and posted over keep-alive sockets.
 * Latency: from the event's publication to its arrival at the endpoint.
 * Baseline, same run, same receivers, same rate: the bench process itself posting
 * the same signed bodies straight to the endpoints (no bus, no Postgres).
 * Target (issue 18): 1,000 events/s to 10 endpoints with p99 delivery <= 1 s.
 * CPU per delivery: of the posting process (the bench for the baseline, the senders
 * together for the service), of the receivers, of nats-server, of the database's Postgres
 * backends, and what the rest of the machine used meanwhile (other tenants of a shared
 * machine).
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { Webhook } from 'standardwebhooks';
import { webhookSubjects } from '../../shared/bus/bus.ts';
import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { resolveSecret } from '../../shared/config/secret.ts';
import { createWorkspace } from '../../shared/db/workspaces.ts';
import { newId } from '../../shared/ids.ts';
import { createLogger } from '../../shared/logger.ts';
import { webhookBody, type WebhookBusEvent } from '../../shared/schemas/webhook.ts';
import { startChildService, type ChildService } from '../../shared/testing/child-service.ts';
import { freePort } from '../../shared/testing/free-port.ts';
import { startTestNatsServer } from '../../shared/testing/nats-server.ts';
import { createTestDatabase } from '../../shared/testing/test-database.ts';
import { newSigningSecret, sealSigningSecret } from '../../shared/webhooks/signing-secret.ts';
import { cpuMeter, processCpuSeconds } from '../process-cpu.ts';
import { log, type Check, type Row, type SuiteResult } from '../suite.ts';

export const name = 'webhooks';
export const description = 'webhook fan-out: 1,000 events/s to 10 loopback endpoints through 2 sender processes vs direct signed POSTs';

const EVENTS_PER_SECOND = 1_000;
const SECONDS = 3;
const ENDPOINTS = 10;
const SENDERS = 2;
const DRAIN_TIMEOUT_MS = 60_000;
const TICK_MS = 10;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Stats {
  received: number;
  unique: number;
  badSignatures: number;
  p50: number;
  p99: number;
  max: number;
}

/** Runs `emit(i)` for i = 0 .. total-1 at `perSecond`, in ticks; resolves with the seconds it took. */
async function paced(total: number, perSecond: number, emit: (i: number) => Promise<unknown>): Promise<number> {
  const started = performance.now();
  let sent = 0;
  const inFlight = new Set<Promise<unknown>>();
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * perSecond));
    while (sent < due) {
      const p = emit(sent++).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await sleep(TICK_MS);
  }
  await Promise.all(inFlight);
  return (performance.now() - started) / 1000;
}

export async function run(): Promise<SuiteResult> {
  const nats = await startTestNatsServer();
  const db = await createTestDatabase('postgres');
  const logger = createLogger('bench-webhooks', 'error');
  const bus = await connectNatsBus(nats.url, { name: 'bench-webhooks', logger });
  const secretText = randomBytes(32).toString('hex');
  const master = await resolveSecret(secretText, '/nonexistent');
  const secrets = Array.from({ length: ENDPOINTS }, () => newSigningSecret());
  const children: ChildService[] = [];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  try {
    const receivers = startChildService('bench/servers/webhook-receivers.ts', { SECRETS: JSON.stringify(secrets) });
    children.push(receivers);
    await receivers.waitFor(/READY \d+ [\d,]+/, 60_000);
    const [, controlPort, portList] = /READY (\d+) ([\d,]+)/.exec(receivers.output)!;
    const urls = portList!.split(',').map((p) => `http://127.0.0.1:${p}/hook`);
    const control = `http://127.0.0.1:${controlPort}`;
    const stats = async () => (await (await fetch(`${control}/stats`)).json()) as Stats;
    const reset = async () => void (await fetch(`${control}/reset`)).arrayBuffer();

    const ws = await createWorkspace(db.sql, { name: 'bench webhooks', plan: 'enterprise' });
    const endpointIds = urls.map(() => newId('webhook'));
    await db.sql`
      INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret)
      SELECT id, ${ws.id}, url, ARRAY['link.created'], sealed
      FROM unnest(${endpointIds}::text[], ${urls}::text[], ${secrets.map((s) => sealSigningSecret(master, s))}::text[]) AS e(id, url, sealed)`;
    const total = EVENTS_PER_SECOND * SECONDS;
    const expected = total * ENDPOINTS;
    const padding = 'x'.repeat(400); // about the size of a link's JSON
    const body = (i: number) => webhookBody('link.created', Date.now(), { id: `link_bench${i}`, sentAt: Date.now(), destinationUrl: `https://example.com/${i}`, padding });

    async function drained(startedAt: number): Promise<{ stats: Stats; seconds: number }> {
      const deadline = Date.now() + DRAIN_TIMEOUT_MS;
      let s = await stats();
      while (s.unique < expected && Date.now() < deadline) {
        await sleep(100);
        s = await stats();
      }
      return { stats: s, seconds: (performance.now() - startedAt) / 1000 };
    }

    // CPU seconds of the database's Postgres backends (the senders' connections come and go with their pools).
    const backendsCpu = async () => {
      const pids = await db.sql<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`;
      return new Map(await Promise.all(pids.map(async ({ pid }) => [pid, await processCpuSeconds(pid)] as const)));
    };
    const backendsUsed = (before: Map<number, number>, after: Map<number, number>) =>
      [...after].reduce((sum, [pid, seconds]) => sum + seconds - (before.get(pid) ?? 0), 0);

    const rows: Row[] = [];
    const perDelivery = (seconds: number | undefined, deliveries: number) => Math.round(((seconds ?? 0) * 1e6) / Math.max(1, deliveries));
    const row = (label: string, offered: number, d: { stats: Stats; seconds: number }, cpu: Record<string, number>): Row => ({
      name: label,
      'events/s offered': Math.round(offered),
      'deliveries/s': Math.round(d.stats.unique / d.seconds),
      delivered: `${d.stats.unique.toLocaleString('en-US')}/${expected.toLocaleString('en-US')}`,
      'p50 ms': d.stats.p50,
      'p99 ms': d.stats.p99,
      'max ms': d.stats.max,
      'bad signatures': d.stats.badSignatures,
      'poster CPU µs/delivery': perDelivery(cpu.poster, d.stats.unique),
      'receivers µs/delivery': perDelivery(cpu.receivers, d.stats.unique),
      'nats µs/delivery': perDelivery(cpu.nats, d.stats.unique),
      'postgres µs/delivery': perDelivery(cpu.postgres, d.stats.unique),
      'others µs/delivery': perDelivery(cpu.others, d.stats.unique),
    });

    // Baseline: the same signed bodies posted straight to the endpoints.
    log(`baseline: ${EVENTS_PER_SECOND} events/s x ${ENDPOINTS} endpoints posted directly for ${SECONDS} s`);
    const signers = secrets.map((s) => new Webhook(s));
    const post = (url: string, signer: Webhook, id: string, payload: string) =>
      new Promise<void>((resolve, reject) => {
        const at = new Date();
        const req = http.request(url, {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signer.sign(id, at, payload) },
        });
        req.on('error', reject);
        req.on('response', (res) => res.resume().on('end', resolve));
        req.end(payload);
      });
    await reset();
    let meter = await cpuMeter({ poster: process.pid, receivers: receivers.pid, nats: nats.pid });
    let started = performance.now();
    let seconds = await paced(total, EVENTS_PER_SECOND, (i) => {
      const id = newId('webhookEvent');
      const payload = body(i);
      return Promise.all(urls.map((url, k) => post(url, signers[k]!, id, payload)));
    });
    let done = await drained(started);
    rows.push(row('direct signed POSTs (bench process, keep-alive)', total / seconds, done, await meter.stop()));
    log(`${rows.at(-1)!['deliveries/s']} deliveries/s, p99 ${rows.at(-1)!['p99 ms']} ms`);

    log(`starting ${SENDERS} webhook sender processes`);
    const senders: ChildService[] = [];
    for (let i = 0; i < SENDERS; i++) {
      const sender = startChildService('services/webhooks/main.ts', {
        DATABASE_URL: db.url,
        NATS_URL: nats.url,
        LINKROUTE_SECRET: secretText,
        WEBHOOKS_PORT: String(await freePort()),
        WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
        LOG_LEVEL: 'info',
      });
      children.push(sender);
      senders.push(sender);
      await sender.waitFor(/webhooks sender running/, 60_000);
    }
    log(`service: ${EVENTS_PER_SECOND} events/s, each to ${ENDPOINTS} endpoints, for ${SECONDS} s`);
    await reset();
    const encoder = new TextEncoder();
    // The bench process only publishes now: its CPU is left out, the senders' counted as the poster's.
    meter = await cpuMeter({ bench: process.pid, receivers: receivers.pid, nats: nats.pid, ...Object.fromEntries(senders.map((c, i) => [`sender${i}`, c.pid])) });
    const backendsBefore = await backendsCpu();
    started = performance.now();
    seconds = await paced(total, EVENTS_PER_SECOND, (i) => {
      const event: WebhookBusEvent = { id: newId('webhookEvent'), workspaceId: ws.id, type: 'link.created', endpointIds, body: body(i) };
      return bus.publishEvent(webhookSubjects.events, encoder.encode(JSON.stringify(event)), event.id);
    });
    done = await drained(started);
    const cpu = await meter.stop();
    cpu.poster = senders.reduce((sum, _, i) => sum + cpu[`sender${i}`]!, 0);
    cpu.postgres = backendsUsed(backendsBefore, await backendsCpu());
    cpu.others = Math.max(0, cpu.others! - cpu.postgres);
    rows.push(row(`webhooks service (${SENDERS} sender processes, JetStream, Postgres)`, total / seconds, done, cpu));
    log(`${rows.at(-1)!['deliveries/s']} deliveries/s, p99 ${rows.at(-1)!['p99 ms']} ms`);

    const service = rows[1]!;
    const final = await stats();
    const [recorded] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'succeeded'`;
    const checks: Check[] = [
      { name: `every delivery arrived (service) within ${DRAIN_TIMEOUT_MS / 1000} s of the start`, pass: final.unique >= expected, detail: `${final.unique.toLocaleString('en-US')} of ${expected.toLocaleString('en-US')} (${final.received - final.unique} repeats)` },
      { name: 'every delivery recorded as succeeded', pass: recorded!.n >= expected, detail: `${recorded!.n.toLocaleString('en-US')}` },
      { name: 'sampled signatures verify (standardwebhooks)', pass: rows.every((r) => r['bad signatures'] === 0), detail: rows.map((r) => `${r.name}: ${r['bad signatures']} bad`).join('; ') },
      { name: `p99 delivery latency <= 1 s at ${EVENTS_PER_SECOND} events/s x ${ENDPOINTS} endpoints`, pass: (service['p99 ms'] as number) <= 1_000, detail: `${service['p99 ms']} ms` },
    ];
    return {
      suite: name,
      rows,
      baseline: rows[0]!,
      checks,
      notes: [
        `${total.toLocaleString('en-US')} events, ${expected.toLocaleString('en-US')} deliveries per row; ${ENDPOINTS} receivers in one process (every 50th signature verified); fresh Postgres database at 127.0.0.1:5432, private nats-server`,
        'latency: publication (or, for the baseline, the post) to arrival, clocks of one machine; deliveries/s: deliveries over the time until the last arrived',
      ],
    };
  } finally {
    agent.destroy();
    for (const child of children.reverse()) await child.kill();
    await bus.close();
    await db.close();
    await nats.destroy();
  }
}
