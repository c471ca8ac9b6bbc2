import { randomBytes } from 'node:crypto';
import type { Registry } from 'prom-client';
import type { Bus } from '../../shared/bus/bus.ts';
import type { Logger } from '../../shared/logger.ts';
import { GeoIp } from '../../shared/request-facts/geo-ip.ts';
import { createRedirectorApp } from './app.ts';
import { clickCounter, type ClickCounter } from './snapshot/click-counter.ts';
import type { RedirectorConfig } from './config.ts';
import { eventPublisher, type EventPublisher } from './events/event-publisher.ts';
import type { ClickSink } from './ports.ts';
import { SnapshotStore } from './snapshot/snapshot-store.ts';
import { pixelConversions } from './events/pixel-conversions.ts';
import { syncSnapshot } from './snapshot/snapshot-sync.ts';
import { registerRedirectorMetrics } from './metrics/redirector-metrics.ts';
import { startRedirectorAdmin } from './admin-server.ts';
import { sharePasswordFailures } from './serving/password-failure-share.ts';

export interface RunningRedirector {
  url: string;
  port: number;
  /** The admin port's base URL (/ready, /metrics, /health): ADMIN_HOST:ADMIN_PORT. */
  adminUrl: string;
  adminPort: number;
  instanceId: string;
  store: SnapshotStore;
  events: EventPublisher;
  /** Stops taking requests, then publishes what is buffered, trying for up to `publishTimeoutMs` (default 5 s). */
  close(publishTimeoutMs?: number): Promise<void>;
}

/**
 * A redirector: the snapshot loaded from the bus before the first request is
 * served, kept live by watching it; clicks batched onto the bus; click counts
 * shared with the other redirectors for clicksLimit, and wrong link passwords for
 * their throttle.
 */
export async function startRedirector(deps: {
  config: RedirectorConfig;
  bus: Bus;
  secret: Buffer;
  logger: Logger;
  /** More metrics for the admin port's /metrics (npm start: the API's, ingesters' and webhooks'). */
  adminMetrics?: readonly Registry[];
}): Promise<RunningRedirector> {
  const { config, bus, logger } = deps;
  const instanceId = randomBytes(6).toString('hex');
  const startedAt = Date.now();
  const geo = GeoIp.open();
  const store = new SnapshotStore();
  const sync = await syncSnapshot({ bus, store, logger });
  await sync.initialized;
  store.setReady(true);
  const events = eventPublisher({ bus, logger, instanceId });
  const counter: ClickCounter = await clickCounter({ bus, store, instanceId, logger });
  const sink: ClickSink = {
    emit(event) {
      events.emit(event);
      if (event.kind === 'click' && !event.bot) counter.record(event.linkId);
    },
  };
  const conversions = pixelConversions({ bus, store, secret: deps.secret, logger });
  const passwordFailures = sharePasswordFailures({ bus, instanceId, logger });
  const app = createRedirectorApp({
    lookup: store,
    sink,
    secret: deps.secret,
    config,
    logger,
    geo,
    onPixelConversion: (c) => conversions.record(c),
    passwordFailures,
  });
  registerRedirectorMetrics(app.metrics, { events, conversions, store, bus, startedAt });
  const admin = await startRedirectorAdmin({ config, lookup: store, bus, registries: [app.metrics, ...(deps.adminMetrics ?? [])], logger });
  const { port, url } = await app.listen(config.REDIRECT_PORT, config.HOST).catch(async (err: unknown) => {
    passwordFailures.stop();
    await admin.close();
    throw err;
  });
  logger.info('redirector listening', { url, adminUrl: admin.url, links: store.size, instanceId });
  return {
    url,
    port,
    adminUrl: admin.url,
    adminPort: admin.port,
    instanceId,
    store,
    events,
    async close(publishTimeoutMs) {
      app.close();
      passwordFailures.stop();
      await admin.close();
      sync.stop();
      await counter.stop();
      await events.close(publishTimeoutMs);
      await conversions.close();
    },
  };
}
