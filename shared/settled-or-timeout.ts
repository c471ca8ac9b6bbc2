/**
 * Resolves when `promise` settles or after `ms`, whichever is first; never rejects. A
 * rejection is the caller's to see on `promise` itself: this only waits for it.
 */
export function settledOrTimeout(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    const done = () => {
      clearTimeout(timer);
      resolve();
    };
    promise.then(done, done);
  });
}
