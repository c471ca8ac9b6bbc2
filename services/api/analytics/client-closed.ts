import { ClickHouseError } from '@clickhouse/client';
import { CodedError } from '../../../shared/coded-error.ts';

/**
 * The client of an analytics request closed its connection before the answer was
 * written, and the request's ClickHouse statements were abandoned with it. Neither
 * the API's failure nor ClickHouse's: nobody is left to answer, so it is never
 * logged as an error nor counted as a 5xx (request-signal.ts ends the request).
 * `cause`, when set, is what the ClickHouse call failed with once abandoned.
 */
export class ClientClosedRequest extends CodedError<'CLIENT_CLOSED_REQUEST'> {
  constructor(options: { cause?: unknown } = {}) {
    super('CLIENT_CLOSED_REQUEST', 'The client closed the request before its answer was written');
    if (options.cause !== undefined) this.cause = options.cause;
  }
}

/** What a ClickHouse call made through untilClientCloses spreads into its parameters. */
export type AbortOption = { abort_signal?: AbortSignal };

/**
 * One ClickHouse call of a request that `signal` abandons when its client goes away
 * (request-signal.ts); without a signal, the call as it always ran.
 *
 * - Not started once the signal has aborted: @clickhouse/client would send it all the
 *   same (it listens for an abort to come, and a signal fires only once), so a
 *   statement after the client left would run to its end.
 * - Given the signal, so the client cancels its HTTP request: the embedded stand-in
 *   then drops the statement if queued and KILLs it if running (engine-queue.ts), a
 *   server cancels it (query-rows.ts, analyticsReadSettings).
 * - Failing once the signal has aborted, it fails as ClientClosedRequest. The client
 *   rejects with a plain Error('The user aborted a request.'), no name or code, while
 *   it waits for the answer; once the answer's headers are in it no longer listens to
 *   the signal, and a read cut short by closing the rows' stream (queryRows does) fails
 *   as a stream error, which would pass for ClickHouse unreachable (503, logged). An error ClickHouse
 *   answered (ClickHouseError) stays itself: it was answered before the abort, and a
 *   bug in a statement is reported whenever its client left.
 *
 * `call` must include reading the result (e.g. `.json()`), so a read the abort cuts
 * short is caught here too.
 */
export async function untilClientCloses<T>(signal: AbortSignal | undefined, call: (abort: AbortOption) => Promise<T>): Promise<T> {
  if (signal === undefined) return call({});
  if (signal.aborted) throw new ClientClosedRequest();
  try {
    return await call({ abort_signal: signal });
  } catch (err) {
    if (signal.aborted && !(err instanceof ClickHouseError)) throw new ClientClosedRequest({ cause: err });
    throw err;
  }
}
