/**
 * The connection queues inside postgres.js (3.4.9, src/queue.js), as installed: patched
 * by patches/postgres+3.4.9.patch (npm's postinstall runs patch-package).
 *
 * Unpatched, a queue kept one consumed slot per shift until it was next empty, and its
 * remove() scanned every slot. The pool's `open` queue (idle connections) is shifted
 * for each query and, with fewer queries under way than connections, never empties:
 * its array grew by one slot per query for good (80,010 slots after 80k sequential
 * queries on 10 connections, measured; 8 bytes each, and a scan of them all in every
 * query's remove), in every long-running API, ingester and sender.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

interface Queue<T> {
  readonly length: number;
  push(x: T): T;
  shift(): T | undefined;
  remove(x: T): T | null;
}

// The ESM build's (what `import postgres from 'postgres'` loads); require gives the CommonJS entry, cjs/src/index.js.
const packageDir = join(dirname(createRequire(import.meta.url).resolve('postgres')), '..', '..');
const { default: Queue } = (await import(pathToFileURL(join(packageDir, 'src', 'queue.js')).href)) as { default: <T>() => Queue<T> };

/** The lengths of the arrays Array#indexOf scans while `run` runs: remove() is the queue's only caller of it. */
function scannedLengths(run: () => void): number[] {
  const lengths: number[] = [];
  const indexOf = Array.prototype.indexOf;
  Array.prototype.indexOf = function (this: unknown[], ...args: [unknown, number?]) {
    lengths.push(this.length);
    return indexOf.apply(this, args);
  };
  try {
    run();
  } finally {
    Array.prototype.indexOf = indexOf;
  }
  return lengths;
}

describe("postgres.js's connection queue (patched)", () => {
  it("keeps its array to the entries it holds when it never empties, as the pool's open queue under light load", () => {
    const open = Queue<{ id: number }>();
    const connections = Array.from({ length: 10 }, (_, id) => open.push({ id }));
    let found = 0;
    const scanned = scannedLengths(() => {
      // What the pool does per query: shift an idle connection, move it (remove from the
      // queue it was in: not found, it was shifted), and push it back when done.
      for (let query = 0; query < 100_000; query++) {
        const c = open.shift()!;
        if (open.remove(c) !== null) found++;
        open.push(c);
      }
    });
    expect(found).toBe(0);
    expect(open.length).toBe(10);
    expect(scanned).toHaveLength(100_000);
    // Unpatched, the last scans covered ~100,000 slots.
    expect(Math.max(...scanned)).toBeLessThan(2_100);
    // Still a queue: each connection once, in the order they went round.
    const order = Array.from({ length: 10 }, () => open.shift()!.id);
    expect(order).toEqual(connections.map((_, k) => (order[0]! + k) % 10));
    expect(open.length).toBe(0);
  });

  it('stays first in, first out across compactions, with entries removed from the middle', () => {
    const q = Queue<number>();
    const expected: number[] = [];
    let next = 0;
    const add = () => {
      q.push(next);
      expected.push(next++);
    };
    for (let i = 0; i < 10; i++) add();
    // About ten live entries throughout, as a pool's queue holds: it compacts every ~1k shifts.
    const scanned = scannedLengths(() => {
      for (let round = 0; round < 20_000; round++) {
        add();
        if (q.shift() !== expected.shift()) throw new Error(`round ${round}: out of order`);
        if (round % 7 === 0) {
          const middle = expected[Math.floor(expected.length / 2)]!;
          if (q.remove(middle) !== middle) throw new Error(`round ${round}: ${middle} not removed`);
          expected.splice(expected.lastIndexOf(middle), 1);
          add();
        }
        if (q.length !== expected.length) throw new Error(`round ${round}: length ${q.length}, not ${expected.length}`);
      }
    });
    // The removes' scans stayed short: the array was compacted under them, again and again.
    expect(scanned.length).toBeGreaterThan(2_800);
    expect(Math.max(...scanned)).toBeLessThan(2_100);
    const drained: number[] = [];
    while (q.length > 0) drained.push(q.shift()!);
    expect(drained).toEqual(expected);
  });
});
