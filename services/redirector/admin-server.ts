import type { Registry } from 'prom-client';
import type { Bus } from '../../shared/bus/bus.ts';
import { checkBus } from '../../shared/health/dependency-checks.ts';
import { startHealthServer, type HealthServer } from '../../shared/health/health-server.ts';
import type { Logger } from '../../shared/logger.ts';
import { combinedMetrics } from '../../shared/metrics/metrics-registry.ts';
import type { RedirectorConfig } from './config.ts';
import type { LinkLookup } from './ports.ts';

/**
 * The redirector's admin port (ADMIN_HOST:ADMIN_PORT, loopback by default): /ready with
 * the links held, /metrics with every tenant's traffic, /health. None of it is on the
 * public redirect port.
 *
 * Ready once the full snapshot is loaded: until then every code would be a 404. The bus
 * is reported, not required: without it the redirector still serves its snapshot and
 * buffers clicks, so pulling it from rotation would only lose traffic.
 */
export function startRedirectorAdmin(deps: {
  config: Pick<RedirectorConfig, 'ADMIN_PORT' | 'ADMIN_HOST'>;
  lookup: Pick<LinkLookup, 'ready' | 'size'>;
  bus: Pick<Bus, 'connected'>;
  /** The redirector's metrics, and any more the process serves here (npm start: the API's). */
  registries: readonly Registry[];
  logger: Logger;
}): Promise<HealthServer> {
  const { lookup } = deps;
  return startHealthServer({
    port: deps.config.ADMIN_PORT,
    host: deps.config.ADMIN_HOST,
    registry: deps.registries.length === 1 ? deps.registries[0]! : combinedMetrics(deps.registries),
    checks: async () => ({ snapshot: lookup.ready() ? 'ok' : 'loading', nats: checkBus(deps.bus) }),
    optional: ['nats'],
    details: () => ({ links: lookup.size }),
    logger: deps.logger,
  });
}
