import { describe, expect, it } from 'vitest';
import { startSideBySide } from './start-side-by-side.ts';

const after = <T>(ms: number, value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));
const failAfter = (ms: number, message: string) => new Promise<never>((_, reject) => setTimeout(() => reject(new Error(message)), ms));

describe('startSideBySide', () => {
  it('answers every value, in order, once all started', async () => {
    const [a, b] = await startSideBySide([after(20, 'postgres'), after(5, 42)]);
    expect([a, b]).toEqual(['postgres', 42]);
  });

  it('throws the first failure only once the others settled, after undoing what started', async () => {
    const events: string[] = [];
    const slow = after(50, 'clickhouse').then((v) => (events.push('clickhouse started'), v));
    const undone: unknown[] = [];
    await expect(
      startSideBySide([failAfter(5, 'postgres refused'), slow, failAfter(10, 'second failure')], async (started) => {
        events.push('undo');
        undone.push(...started);
      }),
    ).rejects.toThrow('postgres refused');
    // The failure waited for the slow start, and undo saw it started (the failed ones undefined).
    expect(events).toEqual(['clickhouse started', 'undo']);
    expect(undone).toEqual([undefined, 'clickhouse', undefined]);
  });
});
