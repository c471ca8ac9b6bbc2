/**
 * Our redirector for the redirect benchmark: the real app, SnapshotStore holding
 * BENCH_LINK_COUNT links (a mix with rules), client address and country from
 * X-Forwarded-For (so geo-IP runs on real public addresses). Prints `READY <port>` once
 * listening and `EVENTS <n>` on SIGTERM before exiting.
 */
import { randomBytes } from 'node:crypto';
import { createLogger } from '../../shared/logger.ts';
import { createRedirectorApp } from '../../services/redirector/app.ts';
import { loadRedirectorConfig } from '../../services/redirector/config.ts';
import type { ClickSink } from '../../services/redirector/ports.ts';
import { eventPublisher } from '../../services/redirector/events/event-publisher.ts';
import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { SnapshotStore } from '../../services/redirector/snapshot/snapshot-store.ts';
import { BENCH_LINK_COUNT, benchLink } from './bench-links.ts';
import { GeoIp } from '../../shared/request-facts/geo-ip.ts';

interface CountingSink extends ClickSink {
  readonly count: number;
}

/**
 * Events go through the production event publisher to NATS (NATS_URL, set by the
 * suite), as DESIGN's redirect budget requires; counted here for the consistency check.
 */
async function createBenchSink(): Promise<CountingSink & { close(): Promise<void> }> {
  const logger = createLogger('bench-redirector', 'error');
  const url = loadRedirectorConfig().NATS_URL;
  if (!url) throw new Error('NATS_URL is required');
  const bus = await connectNatsBus(url, { replicas: 1, name: 'bench-redirector', logger });
  const publisher = eventPublisher({ bus, logger, instanceId: 'bench' });
  let count = 0;
  return {
    emit(event) {
      count++;
      publisher.emit(event);
    },
    get count() {
      return count;
    },
    async close() {
      await publisher.close(5_000);
      await bus.close();
    },
  };
}

const store = new SnapshotStore();
for (let i = 0; i < BENCH_LINK_COUNT; i++) {
  const link = benchLink(i);
  store.apply({ version: 1, linkId: link.id, link });
}
const sink = await createBenchSink();
const app = createRedirectorApp({
  lookup: store,
  sink,
  secret: randomBytes(32),
  config: loadRedirectorConfig({ TRUSTED_IP_HEADER: 'x-forwarded-for', LOG_LEVEL: 'error' }),
  logger: createLogger('bench-redirector', 'error'),
  geo: GeoIp.open(),
});
const { port } = await app.listen(0, '127.0.0.1');
process.stdout.write(`READY ${port}\n`);
process.once('SIGTERM', async () => {
  app.close();
  await sink.close();
  process.stdout.write(`EVENTS ${sink.count}\n`, () => process.exit(0));
});
