import type { Rule } from './api.ts';
import { compareRules } from '../../../shared/routing/rule-order.ts';

/** What a rule's place in evaluation order depends on. */
export type Orderable = Pick<Rule, 'id' | 'linkId' | 'priority' | 'createdAt'>;

/** Rules of one priority, as the redirectors order them (README, Routing rules): link rules before campaign rules, then older, then by id. */
const byTieBreak = (a: Orderable, b: Orderable): number => compareRules({ ...a, priority: 0 }, { ...b, priority: 0 });

/** Evaluation order: priority first, then the tie-break (the redirectors' own comparison). */
export const byEvaluationOrder = (a: Orderable, b: Orderable): number => compareRules(a, b);

/** Whether `rule` at `priority` comes after `above` (at `abovePriority`; null: the top, above 100). */
const fitsBelow = (above: Orderable | null, abovePriority: number, rule: Orderable, priority: number) => priority < abovePriority || (above !== null && priority === abovePriority && byTieBreak(above, rule) < 0);

/**
 * Priorities (1 to 100) that make `order` the evaluation order, changing the rules whose
 * changes cost least (`cost`): each other rule keeps its priority. The new priorities of
 * the rules that change, or null when 1 to 100 cannot hold the order. A rule that changes
 * takes the priority one past the kept rule's below it (one short of the one above when none
 * below is kept), tying a rule only where the order leaves no room.
 */
export function prioritiesFor<R extends Orderable>(order: readonly R[], cost: (rule: R) => number): Map<R, number> | null {
  const n = order.length;
  // best[i + 1]: the least cost of an order down to position i with order[i] keeping its priority (-1: the top, n: the bottom).
  const best: number[] = Array.from({ length: n + 2 }, () => Infinity);
  const keptAbove: number[] = Array.from({ length: n + 2 }, () => -1);
  best[0] = 0;
  for (let i = -1; i < n; i++) {
    if (best[i + 1] === Infinity) continue;
    // The rules after order[i] change, one by one, each as high as it can go: while the
    // next can keep its priority below them, the ones between are enough.
    let above: R | null = i < 0 ? null : order[i]!;
    let abovePriority = i < 0 ? 101 : order[i]!.priority;
    let between = 0;
    for (let j = i + 1; j <= n; j++) {
      const rule = order[j];
      if (rule === undefined || fitsBelow(above, abovePriority, rule, rule.priority)) {
        if (best[i + 1]! + between < best[j + 1]!) {
          best[j + 1] = best[i + 1]! + between;
          keptAbove[j + 1] = i;
        }
      }
      if (rule === undefined) break;
      abovePriority = fitsBelow(above, abovePriority, rule, abovePriority) ? abovePriority : abovePriority - 1;
      if (abovePriority < 1) break;
      above = rule;
      between += cost(rule);
    }
  }
  if (best[n + 1] === Infinity) return null;
  const changes = new Map<R, number>();
  for (let j = n; j >= 0; j = keptAbove[j + 1]!) {
    const i = keptAbove[j + 1]!;
    const gap = order.slice(i + 1, j);
    // The highest priority each rule of the gap may take (the rules above it as high as they go), and the lowest.
    const highest: number[] = [];
    for (let k = 0, above: R | null = i < 0 ? null : order[i]!, priority = i < 0 ? 101 : order[i]!.priority; k < gap.length; above = gap[k]!, k++) {
      if (!fitsBelow(above, priority, gap[k]!, priority)) priority -= 1;
      highest[k] = priority;
    }
    const lowest: number[] = [];
    for (let k = gap.length - 1, below: R | null = order[j] ?? null, priority = j < n ? order[j]!.priority : 0; k >= 0; below = gap[k]!, k--) {
      if (below === null || !fitsBelow(gap[k]!, priority, below, priority)) priority += 1;
      lowest[k] = priority;
    }
    // Each takes a priority of its own, one past its kept neighbour's (a tie only where there is no room):
    // counted from the rule kept below, or from the one above when none is kept below.
    const assigned = j < n ? gap.map((_, k) => k).reverse() : gap.map((_, k) => k);
    let next = j < n ? order[j]!.priority : i < 0 ? 101 : order[i]!.priority;
    for (const k of assigned) {
      next = j < n ? Math.min(next + 1, highest[k]!) : Math.max(next - 1, lowest[k]!);
      if (next !== gap[k]!.priority) changes.set(gap[k]!, next);
    }
    if (i < 0) break;
  }
  return changes;
}
