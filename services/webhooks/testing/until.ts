const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `until(what, probe, done)` polls `probe` every 50 ms until `done` holds, and returns
 * that value; past the timeout it fails naming `what`, the last value and `context()`
 * (the senders' last log lines: what they were doing meanwhile).
 */
export function poller(context: () => string, defaultTimeoutMs: number) {
  return async function until<T>(what: string, probe: () => T | Promise<T>, done: (value: T) => boolean, timeoutMs = defaultTimeoutMs): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await probe();
      if (done(value)) return value;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value).slice(0, 500)}\n${context()}`);
      await sleep(50);
    }
  };
}
