import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure } from './api.ts';

/** How long a load may go unanswered before it counts as failed. */
export const LOAD_TIMEOUT_MS = 30_000;

/** A load given up after LOAD_TIMEOUT_MS, as every view shows it (also a picker's shared load, list-cache.ts). */
export const loadTimeout = () => new ApiFailure(0, 'TIMEOUT', `The API did not answer within ${LOAD_TIMEOUT_MS / 1000} s. Check whether linkroute is running, then try again.`);

export interface Loaded<T> {
  data: T | undefined;
  error: ApiFailure | undefined;
  loading: boolean;
  reload(): void;
}

/**
 * Loads when `deps` change, cancelling the request it replaces. The last data
 * stays on screen while the next loads, so a filter change never blanks a view;
 * if that load fails, the old data goes (it answers another query) and the error
 * shows alone. A failed reload of the same query keeps its data beside the error.
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  // Which deps the data answers: on the render where deps change, before the effect
  // below marks a new load, the old data must not pass for the new query's answer.
  const key = JSON.stringify(deps);
  const [state, setState] = useState<{ data: T | undefined; error: ApiFailure | undefined; loading: boolean; key: string | null }>({ data: undefined, error: undefined, loading: true, key: null });
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  useEffect(() => {
    const controller = new AbortController();
    const fail = (error: ApiFailure) => setState((s) => ({ data: s.key === key ? s.data : undefined, error, loading: false, key }));
    // A request the API (or a proxy) never answers would leave "Loading…" on screen for
    // good: past the timeout it is given up and shown as a failure with a retry.
    const timer = setTimeout(() => {
      controller.abort();
      fail(loadTimeout());
    }, LOAD_TIMEOUT_MS);
    setState((s) => ({ ...s, loading: true }));
    loadRef.current(controller.signal).then(
      (data) => {
        clearTimeout(timer);
        if (!controller.signal.aborted) setState({ data, error: undefined, loading: false, key });
      },
      (err: unknown) => {
        clearTimeout(timer);
        if (controller.signal.aborted) return;
        fail(err instanceof ApiFailure ? err : new ApiFailure(0, 'CLIENT_ERROR', (err as Error).message ?? String(err)));
      },
    );
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);

  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading || state.key !== key, reload };
}

/** A change refused because what it was made on was deleted or changed elsewhere: the view on screen is stale. */
export const isStale = (err: ApiFailure): boolean => err.status === 404 || err.status === 409 || err.status === 410;

export interface Action {
  /** The last action's failure, shown until the next one starts. */
  error: ApiFailure | undefined;
  /** The label of the action under way, if any. */
  busy: string | null;
  run(action: () => Promise<unknown>, label?: string): Promise<void>;
  /** A failure of a change made outside `run` (a download that stores a record): kept and followed as run's are. */
  fail(err: ApiFailure): void;
}

/**
 * Runs a change (a POST, PATCH or DELETE), keeps its failure for display, then calls
 * `after` on success, and also after a 404, 409 or 410: the thing was deleted or changed
 * elsewhere (another tab, an API client), so the view reads it afresh instead of
 * keeping the stale row that the failed change was made on.
 */
export function useAction(after: () => void): Action {
  const [error, setError] = useState<ApiFailure | undefined>();
  const [busy, setBusy] = useState<string | null>(null);
  const afterRef = useRef(after);
  afterRef.current = after;
  const fail = useCallback((err: ApiFailure) => {
    setError(err);
    if (isStale(err)) afterRef.current();
  }, []);
  const run = useCallback(async (action: () => Promise<unknown>, label = 'busy') => {
    setError(undefined);
    setBusy(label);
    try {
      await action();
      afterRef.current();
    } catch (err) {
      if (!(err instanceof ApiFailure)) throw err;
      fail(err);
    } finally {
      setBusy(null);
    }
  }, []);
  return { error, busy, run, fail };
}
