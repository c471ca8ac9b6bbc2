/**
 * In-process timing for the suites' micro-benchmarks: nanoseconds per call, the best
 * of `batches` batches (warm; on a shared machine the best batch is the one least
 * disturbed by other tenants, so it is the steadiest figure of the code's own cost).
 */
export function nsPerCall(op: (i: number) => unknown, calls = 20_000, batches = 20): number {
  return nsPerCallEach([op], calls, batches)[0]!;
}

/**
 * nsPerCall of several ops whose batches take turns (a, b, a, b, ...), so that a busy
 * spell of the machine falls on all of them alike: for comparing one piece of code
 * with another.
 */
export function nsPerCallEach(ops: ReadonlyArray<(i: number) => unknown>, calls = 10_000, batches = 40): number[] {
  const best = ops.map(() => Infinity);
  let sink = 0;
  for (let batch = 0; batch < batches; batch++) {
    for (let k = 0; k < ops.length; k++) {
      const op = ops[k]!;
      const started = process.hrtime.bigint();
      for (let i = 0; i < calls; i++) if (op(i) !== undefined) sink++;
      best[k] = Math.min(best[k]!, Number(process.hrtime.bigint() - started) / calls);
    }
  }
  // Read, so the calls' results cannot be optimised away.
  if (sink < 0) throw new Error('unreachable');
  return best;
}
