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
 * Both are offered on the same schedule (paced): an event is issued when it is due,
 * whether or not the earlier ones have been delivered, so "events/s offered" means the
 * same in both rows. ROUNDS rounds, the order alternating (the senders run throughout).
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
import type { ChildService } from '../../shared/testing/child-service.ts';
import { startBenchService } from '../cleanup.ts';
import { freePort } from '../../shared/testing/free-port.ts';
import { startTestNatsServer } from '../../shared/testing/nats-server.ts';
import { createTestDatabase } from '../../shared/testing/test-database.ts';
import { newSigningSecret, sealSigningSecret } from '../../shared/webhooks/signing-secret.ts';
import { cpuMeter, processCpuSeconds } from '../process-cpu.ts';
import { log, type Check, type Row, type SuiteResult } from '../suite.ts';

export const name = 'webhooks';
export const description = 'webhook fan-out: 1,000 events/s to 10 loopback endpoints through 2 sender processes vs direct signed POSTs';

const EVENTS_PER_SECOND = 1_000;
/** Long enough that p50/p99 describe the steady state rather than the tail after the last event. */
const SECONDS = 10;
const ROUNDS = 2;
/**
 * Before the measured rounds each side runs this long at the same rate, unrecorded, so the
 * rounds measure a running service (connection pools open, code compiled, caches warm),
 * as the redirect suite's warm-up does: the first of two rounds otherwise paid it alone.
 */
const WARMUP_SECONDS = 2;
const ENDPOINTS = 10;
const SENDERS = 2;
/** From a phase's first event until every delivery must have arrived. */
const DRAIN_TIMEOUT_MS = 90_000;
const POST_TIMEOUT_MS = 10_000;
/** Events (each a POST to every endpoint, or a publish) not yet finished, at most: past that the pacing waits. */
const MAX_IN_FLIGHT = 200;
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

/** A direct POST that got no answer in POST_TIMEOUT_MS. */
class PostTimeout extends Error {
  constructor(url: string) {
    super(`POST ${url}: no answer in ${POST_TIMEOUT_MS} ms`);
    this.name = 'PostTimeout';
  }
}

/**
 * Issues `emit(i)` for i = 0 .. total-1 on a schedule of `perSecond`, in ticks, without
 * waiting for each to finish (at most MAX_IN_FLIGHT unfinished: past that it waits and
 * falls behind the schedule, which the offered rate then shows). `issueSeconds`: from the
 * start to the last event issued, so total / issueSeconds is the rate offered, whatever
 * the deliveries took. Resolves once every emit has settled, with the failures counted.
 */
async function paced(total: number, perSecond: number, emit: (i: number) => Promise<unknown>): Promise<{ issueSeconds: number; errors: number; firstError: string }> {
  const started = performance.now();
  let sent = 0;
  let errors = 0;
  let firstError = '';
  const inFlight = new Set<Promise<void>>();
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * perSecond));
    while (sent < due && inFlight.size < MAX_IN_FLIGHT) {
      const p: Promise<void> = emit(sent++).then(
        () => void inFlight.delete(p),
        (err: unknown) => {
          inFlight.delete(p);
          errors++;
          firstError ||= err instanceof Error ? err.message : String(err);
        },
      );
      inFlight.add(p);
    }
    if (inFlight.size >= MAX_IN_FLIGHT) await Promise.race(inFlight);
    else await sleep(TICK_MS);
  }
  const issueSeconds = (performance.now() - started) / 1000;
  await Promise.all(inFlight);
  return { issueSeconds, errors, firstError };
}

export async function run(): Promise<SuiteResult> {
  const nats = await startTestNatsServer();
  const db = await createTestDatabase('postgres');
  const logger = createLogger('bench-webhooks', 'error');
  const bus = await connectNatsBus(nats.url, { replicas: 1, name: 'bench-webhooks', logger });
  const secretText = randomBytes(32).toString('hex');
  const master = await resolveSecret(secretText, '/nonexistent');
  const secrets = Array.from({ length: ENDPOINTS }, () => newSigningSecret());
  const children: ChildService[] = [];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  try {
    const receivers = startBenchService('bench/servers/webhook-receivers.ts', { SECRETS: JSON.stringify(secrets) });
    children.push(receivers);
    await receivers.waitFor(/READY \d+ [\d,]+/, 60_000);
    const [, controlPort, portList] = /READY (\d+) ([\d,]+)/.exec(receivers.output)!;
    const urls = portList!.split(',').map((p) => `http://127.0.0.1:${p}/hook`);
    const control = `http://127.0.0.1:${controlPort}`;
    const stats = async () => (await (await fetch(`${control}/stats`, { signal: AbortSignal.timeout(10_000) })).json()) as Stats;
    const reset = async () => void (await fetch(`${control}/reset`, { signal: AbortSignal.timeout(10_000) })).arrayBuffer();

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

    async function drained(startedAt: number, want = expected): Promise<{ stats: Stats; seconds: number }> {
      const deadline = startedAt + DRAIN_TIMEOUT_MS;
      let s = await stats();
      while (s.unique < want && performance.now() < deadline) {
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
    const row = (label: string, offered: number, errors: number, d: { stats: Stats; seconds: number }, cpu: Record<string, number>): Row => ({
      name: label,
      'events/s offered': Math.round(offered),
      errors,
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

    const signers = secrets.map((s) => new Webhook(s));
    const post = (url: string, signer: Webhook, id: string, payload: string) =>
      new Promise<void>((resolve, reject) => {
        const at = new Date();
        const req = http.request(url, {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signer.sign(id, at, payload) },
        });
        req.setTimeout(POST_TIMEOUT_MS, () => req.destroy(new PostTimeout(url)));
        req.on('error', reject);
        req.on('response', (res) => res.resume().on('end', resolve));
        req.end(payload);
      });

    // The senders run from the start, idle during the baseline, so each phase has the same processes around it.
    log(`starting ${SENDERS} webhook sender processes`);
    const senders: ChildService[] = [];
    for (let i = 0; i < SENDERS; i++) {
      const sender = startBenchService('services/webhooks/main.ts', {
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

    // Baseline: the same signed bodies posted straight to the endpoints.
    const emitDirect = (i: number) => {
      const id = newId('webhookEvent');
      const payload = body(i);
      return Promise.all(urls.map((url, k) => post(url, signers[k]!, id, payload)));
    };
    const direct = async (round: number): Promise<Row> => {
      log(`round ${round + 1}/${ROUNDS} baseline: ${EVENTS_PER_SECOND} events/s x ${ENDPOINTS} endpoints posted directly for ${SECONDS} s`);
      await reset();
      const meter = await cpuMeter({ poster: process.pid, receivers: receivers.pid, nats: nats.pid });
      const started = performance.now();
      const offered = await paced(total, EVENTS_PER_SECOND, emitDirect);
      if (offered.errors > 0) log(`${offered.errors} events with a failed POST, the first: ${offered.firstError}`);
      const done = await drained(started);
      return row(`direct signed POSTs (bench process, keep-alive), round ${round + 1}`, total / offered.issueSeconds, offered.errors, done, await meter.stop());
    };

    const encoder = new TextEncoder();
    const emitService = (i: number) => {
      const event: WebhookBusEvent = { id: newId('webhookEvent'), workspaceId: ws.id, type: 'link.created', endpointIds, body: body(i) };
      return bus.publishEvent(webhookSubjects.events, encoder.encode(JSON.stringify(event)), event.id);
    };
    const service = async (round: number): Promise<Row> => {
      log(`round ${round + 1}/${ROUNDS} service: ${EVENTS_PER_SECOND} events/s, each to ${ENDPOINTS} endpoints, for ${SECONDS} s`);
      await reset();
      // The bench process only publishes now: its CPU is left out, the senders' counted as the poster's.
      const meter = await cpuMeter({ bench: process.pid, receivers: receivers.pid, nats: nats.pid, ...Object.fromEntries(senders.map((c, i) => [`sender${i}`, c.pid])) });
      const backendsBefore = await backendsCpu();
      const started = performance.now();
      const offered = await paced(total, EVENTS_PER_SECOND, emitService);
      if (offered.errors > 0) log(`${offered.errors} failed publishes, the first: ${offered.firstError}`);
      const done = await drained(started);
      const cpu = await meter.stop();
      cpu.poster = senders.reduce((sum, _, i) => sum + cpu[`sender${i}`]!, 0);
      cpu.postgres = backendsUsed(backendsBefore, await backendsCpu());
      cpu.others = Math.max(0, cpu.others! - cpu.postgres);
      serviceArrived.push(done.stats);
      return row(`webhooks service (${SENDERS} sender processes, JetStream, Postgres), round ${round + 1}`, total / offered.issueSeconds, offered.errors, done, cpu);
    };

    for (const [side, emit] of [['baseline', emitDirect], ['service', emitService]] as const) {
      log(`warm-up, ${side}: ${EVENTS_PER_SECOND} events/s for ${WARMUP_SECONDS} s, not measured`);
      await reset();
      const started = performance.now();
      await paced(EVENTS_PER_SECOND * WARMUP_SECONDS, EVENTS_PER_SECOND, emit);
      await drained(started, EVENTS_PER_SECOND * WARMUP_SECONDS * ENDPOINTS);
    }

    const serviceArrived: Stats[] = [];
    const baselineRows: Row[] = [];
    const serviceRows: Row[] = [];
    // The order alternates, so whatever the first phase of a run pays (or leaves behind) falls on both.
    for (let round = 0; round < ROUNDS; round++) {
      for (const phase of round % 2 === 0 ? ['baseline', 'service'] : ['service', 'baseline']) {
        const r = phase === 'baseline' ? await direct(round) : await service(round);
        (phase === 'baseline' ? baselineRows : serviceRows).push(r);
        log(`${r['deliveries/s']} deliveries/s, p99 ${r['p99 ms']} ms`);
      }
    }
    rows.push(...baselineRows, ...serviceRows);

    const [recorded] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE status = 'succeeded'`;
    const stored = expected * ROUNDS + EVENTS_PER_SECOND * WARMUP_SECONDS * ENDPOINTS;
    const worstP99 = Math.max(...serviceRows.map((r) => r['p99 ms'] as number));
    const checks: Check[] = [
      {
        name: `every delivery arrived (service) within ${DRAIN_TIMEOUT_MS / 1000} s of the start, in every round`,
        pass: serviceArrived.every((a) => a.unique >= expected),
        detail: serviceArrived.map((a) => `${a.unique.toLocaleString('en-US')} of ${expected.toLocaleString('en-US')} (${a.received - a.unique} repeats)`).join('; '),
      },
      { name: 'every delivery recorded as succeeded (the service warm-up\'s too)', pass: recorded!.n >= stored, detail: `${recorded!.n.toLocaleString('en-US')} of ${stored.toLocaleString('en-US')}` },
      { name: 'no failed posts or publishes', pass: rows.every((r) => r.errors === 0), detail: rows.map((r) => `${r.name}: ${r.errors}`).join('; ') },
      { name: 'sampled signatures verify (standardwebhooks)', pass: rows.every((r) => r['bad signatures'] === 0), detail: rows.map((r) => `${r.name}: ${r['bad signatures']} bad`).join('; ') },
      { name: `p99 delivery latency <= 1 s at ${EVENTS_PER_SECOND} events/s x ${ENDPOINTS} endpoints, every round`, pass: worstP99 <= 1_000, detail: serviceRows.map((r) => `${r['p99 ms']} ms`).join(', ') },
    ];
    return {
      suite: name,
      rows,
      baseline: baselineRows[0]!,
      checks,
      notes: [
        `${total.toLocaleString('en-US')} events over ${SECONDS} s, ${expected.toLocaleString('en-US')} deliveries per row, after a ${WARMUP_SECONDS} s warm-up of each side; ${ROUNDS} rounds, baseline and service taking turns at going first; ${ENDPOINTS} receivers in one process (every 50th signature verified); fresh Postgres database at 127.0.0.1:5432, private nats-server`,
        `events/s offered: events issued over the time from the first to the last, on the same schedule in both rows (an event is issued when due, not after the previous one's deliveries; at most ${MAX_IN_FLIGHT} unfinished, past which the schedule slips and this figure falls)`,
        'latency: publication (or, for the baseline, the post) to arrival, clocks of one machine; deliveries/s: deliveries over the time until the last arrived; errors: events whose publish or a POST failed (the baseline\'s POSTs time out after 10 s)',
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
