/**
 * Evaluation order (DESIGN "Rule order"): highest priority first; on a tie link rules
 * before campaign-wide rules (linkId null); then older first; then id, so the order is
 * total and every process (API preview, each redirector) evaluates identically.
 */
import type { RuleRecord } from './types.ts';

type Orderable = Pick<RuleRecord, 'id' | 'linkId' | 'priority' | 'createdAt'>;

function createdMs(rule: Orderable): number {
  const ms = Date.parse(rule.createdAt);
  return Number.isNaN(ms) ? 0 : ms;
}

export function compareRules(a: Orderable, b: Orderable): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  const aCampaign = a.linkId === null ? 1 : 0;
  const bCampaign = b.linkId === null ? 1 : 0;
  if (aCampaign !== bCampaign) return aCampaign - bCampaign;
  const created = createdMs(a) - createdMs(b);
  if (created !== 0) return created;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** A sorted copy; the input is left untouched. */
export function orderRules<T extends Orderable>(rules: readonly T[]): T[] {
  return [...rules].sort(compareRules);
}
