import type { ClickHouseClient } from '@clickhouse/client';
import type { Bus } from '../bus/bus.ts';

/**
 * The dependency checks behind `GET /ready`. A probe must answer within the
 * orchestrator's timeout (often 1 s), so a check that hangs (a ClickHouse that
 * accepts connections but does not answer) fails after `timeoutMs`.
 */
export type CheckResult = 'ok' | 'unavailable';

export const READY_CHECK_TIMEOUT_MS = 1_000;

/** `query` (e.g. Postgres `SELECT 1`) settled successfully within `timeoutMs`. */
export function checkQuery(query: PromiseLike<unknown>, timeoutMs = READY_CHECK_TIMEOUT_MS): Promise<CheckResult> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve('unavailable'), timeoutMs);
    timer.unref();
    const settle = (result: CheckResult) => () => {
      clearTimeout(timer);
      resolve(result);
    };
    query.then(settle('ok'), settle('unavailable'));
  });
}

/** ClickHouse answers its ping (GET /ping on the HTTP interface). */
export async function checkClickHouse(clickhouse: ClickHouseClient, timeoutMs = READY_CHECK_TIMEOUT_MS): Promise<CheckResult> {
  // ping() never throws: a failure (refused, timed out, an error status) is success: false.
  const result = await clickhouse.ping({ select: false, abort_signal: AbortSignal.timeout(timeoutMs) });
  return result.success ? 'ok' : 'unavailable';
}

/** The bus client holds a live connection (it reconnects by itself; no round trip is asked). */
export function checkBus(bus: Pick<Bus, 'connected'>): CheckResult {
  return bus.connected() ? 'ok' : 'unavailable';
}
