import type { Logger } from '../../shared/logger.ts';
import type { GeoIp } from '../../shared/request-facts/geo-ip.ts';
import type { RedirectorConfig } from './config.ts';
import type { PixelConversion } from './serving/pixel.ts';
import type { PasswordFailureShare } from './serving/password-failure-share.ts';
import type { ClickSink, LinkLookup } from './ports.ts';
import type { RequestCounters } from './metrics/request-counters.ts';

/** Dependencies of the redirector's HTTP layer. */
export interface RedirectorDeps {
  lookup: LinkLookup;
  sink: ClickSink;
  /** LINKROUTE_SECRET (resolveSecret): click-id MACs and visitor hashes. */
  secret: Buffer;
  config: RedirectorConfig;
  logger: Logger;
  /** Country, region and city of client addresses (GeoIp.open(), once per process). */
  geo: GeoIp;
  /** Epoch ms; injectable for tests. */
  now?: () => number;
  /**
   * A verified conversion pixel hit on a link with trackingType `pixel`. Called
   * synchronously after the GIF is answered; must not block. Exceptions are logged.
   */
  onPixelConversion?: (input: PixelConversion) => void;
  /**
   * Wrong link passwords shared with the other redirectors (startRedirector: over the
   * bus). Absent: this app throttles them on its own.
   */
  passwordFailures?: PasswordFailureShare;
}

export interface RedirectorContext extends Required<Omit<RedirectorDeps, 'onPixelConversion' | 'passwordFailures'>> {
  onPixelConversion: RedirectorDeps['onPixelConversion'];
  passwordFailures: RedirectorDeps['passwordFailures'];
  /** What was answered, counted on the request path (request-counters.ts). */
  counters: RequestCounters;
}
