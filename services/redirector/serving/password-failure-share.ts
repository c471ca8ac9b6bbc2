/**
 * Wrong link passwords shared by the redirectors, so that N of them behind a balancer
 * throttle as one: each failure checked here is published on PASSWORD_FAILURES_SUBJECT
 * (core NATS) with the keys it was charged under (password-failure-message.ts), and each
 * redirector charges the failures of the others at its own time of arrival. Its own come
 * back too and are ignored: they were charged when checked.
 *
 * At most once, which bounds how far the shared limit can be exceeded:
 * - a failure reaches the others some milliseconds after its check: guesses they check
 *   meanwhile (at most PASSWORD_CHECKS_IN_FLIGHT at once on each) are not held back by it;
 * - while NATS is away nothing is published (a failure sent late, on reconnect, would be
 *   charged as new) and nothing arrives: each redirector throttles on its own, the limit
 *   then up to N times higher across N of them.
 * Whoever may publish on the bus can charge keys; they are keyed hashes, so without
 * LINKROUTE_SECRET no one can aim at a given visitor or address.
 */
import type { Bus } from '../../../shared/bus/bus.ts';
import { PASSWORD_FAILURES_SUBJECT } from '../../../shared/bus/bus.ts';
import { errorFields, type Logger } from '../../../shared/logger.ts';
import { decodePasswordFailure, encodePasswordFailure } from './password-failure-message.ts';
import type { PasswordLimitKeys } from './password-limits.ts';

const REPORT_EVERY_MS = 60_000;

export interface PasswordFailureShare {
  /** Tells the other redirectors of a wrong password charged here under `keys`. Never throws. */
  publish(keys: PasswordLimitKeys): void;
  /**
   * From now on, calls `onFailure` with the keys of each wrong password another
   * redirector reports (one listener: the password handler's; a later call replaces it).
   */
  listen(onFailure: (keys: PasswordLimitKeys) => void): void;
  stop(): void;
}

/** Counts what happens often; logs it, with the latest detail and the count, at most once a minute. */
function reportedAtMostEveryMinute(say: (fields: Record<string, unknown>) => void, now: () => number): (detail: Record<string, unknown>) => void {
  let count = 0;
  let saidAt = -Infinity;
  return (detail) => {
    count++;
    if (now() - saidAt < REPORT_EVERY_MS) return;
    say({ ...detail, count });
    count = 0;
    saidAt = now();
  };
}

export function sharePasswordFailures(deps: { bus: Bus; instanceId: string; logger: Logger; now?: () => number }): PasswordFailureShare {
  const { bus, instanceId, logger } = deps;
  const now = deps.now ?? Date.now;
  let onFailure: ((keys: PasswordLimitKeys) => void) | null = null;
  const malformed = reportedAtMostEveryMinute((fields) => logger.warn('malformed password failure messages dropped (since the last such report)', fields), now);
  const unpublished = reportedAtMostEveryMinute((fields) => logger.warn('password failures not shared with the other redirectors (since the last such report)', fields), now);

  const subscription = bus.subscribe(PASSWORD_FAILURES_SUBJECT, (data) => {
    const decoded = decodePasswordFailure(data);
    if ('malformed' in decoded) {
      malformed({ reason: decoded.malformed });
      return;
    }
    if (decoded.failure.from === instanceId) return;
    onFailure?.(decoded.failure.keys);
  });

  return {
    publish(keys) {
      if (!bus.connected()) return;
      const data = encodePasswordFailure({ from: instanceId, keys });
      if (data === null) {
        unpublished({ reason: 'keys beyond the message bounds' });
        return;
      }
      try {
        bus.publish(PASSWORD_FAILURES_SUBJECT, data);
      } catch (err) {
        // Closed (shutting down) or refused: this redirector's own throttle has the failure.
        unpublished(errorFields(err));
      }
    },
    listen(listener) {
      onFailure = listener;
    },
    stop() {
      onFailure = null;
      subscription.stop();
    },
  };
}
