import { describe, expect, it } from 'vitest';
import { defaultRetryPolicy, nextAttemptAt } from './retry-schedule.ts';

const DAY = 86_400_000;

describe('retry schedule', () => {
  const policy = defaultRetryPolicy(5_000, DAY);

  it('backs off exponentially, each wait within the upper half of its step', () => {
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    for (const [attempts, step] of [[1, 5_000], [2, 10_000], [3, 20_000], [6, 160_000]] as const) {
      expect(nextAttemptAt(policy, attempts, t0, t0, () => 0)).toBe(t0 + step / 2);
      expect(nextAttemptAt(policy, attempts, t0, t0, () => 1)).toBe(t0 + step);
    }
    // Capped at six hours between attempts.
    expect(nextAttemptAt(policy, 30, t0, t0, () => 1)).toBe(t0 + 6 * 3600_000);
  });

  it('keeps trying for 24 h after the first attempt, the last one at the end, then gives up', () => {
    const t0 = 0;
    let now = t0;
    let attempts = 1;
    const times: number[] = [];
    for (;;) {
      const next = nextAttemptAt(policy, attempts, t0, now, Math.random);
      if (next === null) break;
      times.push(next);
      now = next;
      attempts++;
    }
    expect(times.at(-1)).toBe(t0 + DAY);
    expect(times.length).toBeGreaterThan(10);
    expect(times.length).toBeLessThan(30);
    expect(times.every((t, i) => i === 0 || t > times[i - 1]!)).toBe(true);
  });

  it('spreads retries of deliveries that failed together', () => {
    const spread = new Set(Array.from({ length: 50 }, () => nextAttemptAt(policy, 4, 0, 0)));
    expect(spread.size).toBeGreaterThan(40);
  });
});
