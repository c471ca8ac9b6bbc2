import type { DeliveryStore } from '../delivery-store.ts';

/** A store call as the dispatcher made it, in the order made. */
export interface StoreCall {
  name: string;
  /** The delivery ids of a renewal or a write. */
  ids: string[];
  /** A renewal's claim tokens, in the order of `ids`. */
  tokens?: string[];
  /** 'ok', or the error's name when it failed. */
  outcome?: string;
}

/**
 * The store, each call logged as it is made (before its first await, so the log's order is
 * the order the dispatcher decided them in). `holdRewrites`: recordAttempts calls after the
 * first wait until `release()` (a sender whose writes are slow to get through).
 * `loseFirstAnswer`: the first recordAttempts commits, then fails as if the connection were
 * reset before its answer came (a plain Error: the dispatcher cannot tell it committed).
 */
export function loggedStore(store: DeliveryStore, options: { holdRewrites?: boolean; loseFirstAnswer?: boolean } = {}) {
  const calls: StoreCall[] = [];
  let release = () => {};
  const gate = options.holdRewrites ? new Promise<void>((r) => (release = r)) : Promise.resolve();
  const wrapped: Record<string, unknown> = { ...store };
  for (const [name, method] of Object.entries(store)) {
    if (typeof method !== 'function') continue;
    wrapped[name] = async (...args: unknown[]) => {
      const renewal = name === 'renewClaims' ? (args[0] as Map<string, string>) : undefined;
      const call: StoreCall = {
        name,
        ids: renewal ? [...renewal.keys()] : name === 'recordAttempts' ? (args[0] as Array<{ deliveryId: string }>).map((r) => r.deliveryId) : [],
        ...(renewal ? { tokens: [...renewal.values()] } : {}),
      };
      const first = name === 'recordAttempts' && !calls.some((c) => c.name === 'recordAttempts');
      calls.push(call);
      if (name === 'recordAttempts' && !first) await gate;
      try {
        const result = await (method as (...a: unknown[]) => unknown)(...args);
        if (first && options.loseFirstAnswer) throw new Error('connection reset: the write committed, its answer lost');
        call.outcome = 'ok';
        return result;
      } catch (err) {
        call.outcome = err instanceof Error ? err.name : String(err);
        throw err;
      }
    };
  }
  return { store: wrapped as unknown as DeliveryStore, calls, release: () => release() };
}
