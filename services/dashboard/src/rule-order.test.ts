import { describe, expect, it } from 'vitest';
import { byEvaluationOrder, prioritiesFor, type Orderable } from './rule-order.ts';

type R = Orderable & { name: string };
let clock = Date.parse('2026-06-01T00:00:00Z');
/** Rules created in the order given (the first oldest); a name ending in * is campaign-wide. */
const rules = (...specs: Array<[string, number]>): R[] =>
  specs.map(([name, priority]) => ({ name, id: `rule_${name}`, linkId: name.endsWith('*') ? null : 'link_1', priority, createdAt: new Date((clock += 1000)).toISOString() }));
const names = (list: R[]) => list.map((r) => r.name);
const cost = (moved: R) => (r: R) => (r === moved ? 2 : r.linkId === null ? 1000 : 3);

/** Moves `name` one place in the evaluation order of `list`: the new order and the changed priorities by name. */
function move(list: R[], name: string, direction: -1 | 1) {
  const before = [...list].sort(byEvaluationOrder);
  const at = before.findIndex((r) => r.name === name);
  const order = [...before];
  [order[at], order[at + direction]] = [order[at + direction]!, order[at]!];
  const changes = prioritiesFor(order, cost(before[at]!));
  if (!changes) return null;
  const after = before.map((r) => ({ ...r, priority: changes.get(r) ?? r.priority })).sort(byEvaluationOrder);
  expect(names(after)).toEqual(names(order));
  for (const priority of changes.values()) expect(priority).toBeGreaterThanOrEqual(1), expect(priority).toBeLessThanOrEqual(100);
  return { order: names(after), changed: Object.fromEntries([...changes].map(([r, p]) => [r.name, p])) };
}

describe('prioritiesFor: a move swaps one place, in as few changes as it can', () => {
  it('never ties a rule beyond the neighbour in the wrong order (C 50, B 51, A 52, created in that order)', () => {
    const list = rules(['C', 50], ['B', 51], ['A', 52]);
    // C at 52 would tie A and, older, go first: C takes 51, tied with the newer B.
    expect(move(list, 'C', -1)).toEqual({ order: ['A', 'C', 'B'], changed: { C: 51 } });
    expect(move(list, 'A', 1)).toEqual({ order: ['B', 'A', 'C'], changed: { A: 51 } });
    expect(move(list, 'B', 1)).toEqual({ order: ['A', 'C', 'B'], changed: { B: 49 } });
  });

  it('moves past a plain neighbour by one priority, and to the top just above it', () => {
    expect(move(rules(['G', 60], ['H', 40]), 'H', -1)).toEqual({ order: ['H', 'G'], changed: { H: 61 } });
    expect(move(rules(['G', 60], ['H', 40]), 'G', 1)).toEqual({ order: ['H', 'G'], changed: { G: 39 } });
  });

  it('in a run of tied rules (the default 50), renumbers what the new order needs', () => {
    const list = rules(['X', 50], ['Y', 50], ['Z', 50], ['W', 50]);
    expect(move(list, 'Z', -1)!.order).toEqual(['X', 'Z', 'Y', 'W']);
    expect(Object.keys(move(list, 'Z', -1)!.changed)).toHaveLength(2);
    expect(move(list, 'W', -1)).toEqual({ order: ['X', 'Y', 'W', 'Z'], changed: { Z: 49 } });
    expect(move(list, 'X', 1)!.order).toEqual(['Y', 'X', 'Z', 'W']);
  });

  it('at the edges of 1 to 100 the neighbour steps aside', () => {
    expect(move(rules(['older', 100], ['newer', 100]), 'newer', -1)).toEqual({ order: ['newer', 'older'], changed: { older: 99 } });
    expect(move(rules(['older', 1], ['newer', 1]), 'older', 1)).toEqual({ order: ['newer', 'older'], changed: { newer: 2 } });
  });

  it('leaves a campaign-wide rule be where a link rule can give way', () => {
    // camp* orders the campaign's other links too: the two link rules move instead.
    const list = rules(['camp*', 50], ['L1', 50], ['L2', 50]);
    expect(names([...list].sort(byEvaluationOrder))).toEqual(['L1', 'L2', 'camp*']);
    const moved = move(list, 'L2', -1)!;
    expect(moved.order).toEqual(['L2', 'L1', 'camp*']);
    expect(moved.changed).not.toHaveProperty('camp*');
  });

  it('says so when 1 to 100 cannot hold the order', () => {
    // 'first' (the oldest) at 1, then r1 to r100 at 1 to 100, each newer than the one below: no two may tie, so 101 rules would need 101 priorities.
    const list = rules(['first', 1], ...Array.from({ length: 100 }, (_, i): [string, number] => [`r${i + 1}`, i + 1]));
    expect(names([...list].sort(byEvaluationOrder)).slice(-3)).toEqual(['r2', 'first', 'r1']);
    expect(move(list, 'r1', -1)).toBeNull();
  });
  it('any move in any short list swaps exactly those two rules, every priority within 1 to 100', () => {
    // A fixed sequence (a linear congruential generator): the same lists on every run.
    let seed = 7;
    const random = (below: number) => (seed = (seed * 48271) % 2147483647) % below;
    const pool = [1, 2, 3, 49, 50, 51, 99, 100];
    for (let round = 0; round < 2000; round++) {
      const list = rules(...Array.from({ length: 2 + random(7) }, (_, i): [string, number] => [`${i}${random(4) === 0 ? '*' : ''}`, pool[random(pool.length)]!]));
      const at = random(list.length - 1);
      const name = [...list].sort(byEvaluationOrder)[at]!.name;
      expect(move(list, name, 1)).not.toBeNull();
    }
  });
});
