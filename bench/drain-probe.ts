/**
 * One backlog drain for bench/before-after.ts, with the code of the checkout at $TREE
 * (this tree's or an older revision's): EVENTS click events published as redirector
 * batches (500 a message, keys in that tree's declaration order) to NATS_URL, then that
 * tree's ingester (its shipped defaults) drains them into CLICKHOUSE_URL, timed from its
 * start until it has inserted them all. Prints `RATE <events/s>` and `CPU <seconds>`
 * (this process's, publishing included).
 *
 * Unlike the ingest suite, it measures the ingester code's cost apart from what the
 * tables hold: the events are bench/bench-events.ts's low-cardinality ones (few distinct
 * dimension values, so the rollups get small inserts), into a fresh, empty ClickHouse
 * each round, one drain per round. Its events/s are not the ingest suite's figure and
 * are compared only between the two trees of one run.
 *
 * Only module paths and functions both trees have are used (the ingester, its click
 * table and config, the bus, the ClickHouse client and migrations, the click schema).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { makeEvent } from './bench-events.ts';

interface Bus {
  publishEvent(subject: string, data: Uint8Array, msgId: string): Promise<void>;
  close(): Promise<void>;
}
interface Ingester {
  stats(): { inserted: number };
  stop(): Promise<void>;
}
interface Closable {
  close(): Promise<void>;
}

const EVENTS_PER_MESSAGE = 500;
/** As the ingest suite stamps a backlog: clicked at this rate up to now. */
const RATE_PER_SECOND = 20_000;

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`drain-probe: ${name} is required`);
  return value;
};
const tree = env('TREE');
const events = Number(env('EVENTS'));
const load = (path: string) => import(pathToFileURL(join(tree, path)).href);

const { createLogger } = await load('shared/logger.ts');
const { connectNatsBus } = await load('shared/bus/nats-bus.ts');
const { connectClickHouse } = await load('shared/clickhouse/clickhouse-client.ts');
// SCHEMA_TREE (default TREE): whose ClickHouse migrations make the tables, so that two
// trees' ingesters can be timed into the same schema (before-after.ts --schema after).
const schemaTree = process.env.SCHEMA_TREE || tree;
const { migrateClickHouse } = await import(pathToFileURL(join(schemaTree, 'shared/clickhouse/clickhouse-migrate.ts')).href);
const { clickEventSchema, eventSubjects } = await load('shared/schemas/click-event.ts');
const { loadIngesterConfig } = await load('services/ingester/config.ts');
const { startIngester } = await load('services/ingester/ingester.ts');
const { clickEvents } = await load('services/ingester/event-tables.ts');

const logger = createLogger('drain-probe', 'silent');
const config = loadIngesterConfig({}) as { INGEST_MAX_MESSAGES: number; INGEST_LINGER_MS: number };
const clickhouse = connectClickHouse(env('CLICKHOUSE_URL'), { requestTimeoutMs: 120_000 }) as Closable;
await migrateClickHouse(clickhouse);
const bus = (await connectNatsBus(env('NATS_URL'), { name: 'drain-probe', logger, replicas: 1 })) as Bus;

// The tree's own field order: an older click event has fewer fields.
const keys = Object.keys((clickEventSchema as { shape: Record<string, unknown> }).shape);
const inOrder = (event: Record<string, unknown>) => JSON.stringify(Object.fromEntries(keys.map((k) => [k, event[k]])));
const run = `d${randomBytes(3).toString('hex')}`;
const now = Date.now();
const encoder = new TextEncoder();
for (let m = 0; m < events / EVENTS_PER_MESSAGE; m++) {
  let text = '';
  for (let j = 0; j < EVENTS_PER_MESSAGE; j++) {
    const i = m * EVENTS_PER_MESSAGE + j;
    text += `${inOrder(makeEvent(i, run, now - Math.round(((events - i) * 1000) / RATE_PER_SECOND)))}\n`;
  }
  await bus.publishEvent((eventSubjects as { clicks: string }).clicks, encoder.encode(text), `${run}-${m}`);
}

const started = performance.now();
const ingester = startIngester({ kind: clickEvents, bus, clickhouse, logger, consumerName: `drain-${run}`, maxMessages: config.INGEST_MAX_MESSAGES, lingerMs: config.INGEST_LINGER_MS }) as Ingester;
const deadline = Date.now() + Math.max(120_000, events / 5);
while (ingester.stats().inserted < events && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
const seconds = (performance.now() - started) / 1000;
const inserted = ingester.stats().inserted;
await ingester.stop();
await bus.close();
await clickhouse.close();
if (inserted < events) throw new Error(`drain-probe: ${inserted} of ${events} events inserted before the deadline`);
const cpu = process.cpuUsage();
process.stdout.write(`RATE ${inserted / seconds}\nCPU ${(cpu.user + cpu.system) / 1e6}\n`);
