/**
 * Every kind of event an ingester process stores (clicks and conversions), each from its
 * own durable consumer, which every ingester process shares. The standalone ingester and
 * `npm start` both start exactly this set, so a new event kind is added in one place.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import type { Registry } from 'prom-client';
import type { Bus } from '../../shared/bus/bus.ts';
import type { Logger } from '../../shared/logger.ts';
import type { IngesterConfig } from './config.ts';
import { clickIdOrigin } from '../../shared/click-id-origin.ts';
import { clickEvents, conversionEvents } from './event-tables.ts';
import { startIngester, type Ingester } from './ingester.ts';
import { registerIngesterMetrics } from './ingester-metrics.ts';

export interface EventIngesters {
  /** Stops every ingester; each finishes and acknowledges the batch in hand (with `drain`, everything the bus holds; see Ingester.stop). */
  stop(options?: { drain?: boolean }): Promise<void>;
  readonly count: number;
  /** For /ready: 'ok' while every one reads; else what the first that does not is doing. */
  readiness(): 'ok' | 'opening' | 'stopped';
}

export function startEventIngesters(deps: {
  bus: Bus;
  clickhouse: ClickHouseClient;
  logger: Logger;
  config: Pick<IngesterConfig, 'INGEST_CONSUMER' | 'INGEST_MAX_MESSAGES' | 'INGEST_LINGER_MS'>;
  /** Where their metrics are registered. */
  metrics: Registry;
  /** LINKROUTE_SECRET: click events whose click id it did not sign are forged (see shared/click-id-origin.ts). */
  secret: Buffer;
}): EventIngesters {
  const { bus, clickhouse, logger, config } = deps;
  const common = { bus, clickhouse, logger, maxMessages: config.INGEST_MAX_MESSAGES, lingerMs: config.INGEST_LINGER_MS };
  const sources: { kind: string; ingester: Ingester }[] = [
    { kind: clickEvents.name, ingester: startIngester({ ...common, kind: clickEvents, consumerName: `${config.INGEST_CONSUMER}-clicks`, genuine: clickIdOrigin(deps.secret) }) },
    { kind: conversionEvents.name, ingester: startIngester({ ...common, kind: conversionEvents, consumerName: `${config.INGEST_CONSUMER}-conversions` }) },
  ];
  registerIngesterMetrics(deps.metrics, sources);
  return {
    count: sources.length,
    readiness() {
      const states = sources.map((source) => source.ingester.state());
      return states.includes('stopped') ? 'stopped' : states.includes('opening') ? 'opening' : 'ok';
    },
    async stop(options) {
      await Promise.all(sources.map((source) => source.ingester.stop(options)));
    },
  };
}
