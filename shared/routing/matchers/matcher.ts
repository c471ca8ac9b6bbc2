/**
 * A matcher turns one rule type's validated conditions into a request-time predicate,
 * in two steps so the middle form can travel as JSON (API -> NATS -> redirectors):
 *   compile(conditions) -> plain JSON     (API side, once per rule change)
 *   hydrate(json)       -> Predicate      (redirector side, once per snapshot update)
 * Predicates run on the hot path: no allocation, no I/O, no clock reads.
 */
import type { Predicate } from '../types.ts';

export interface CompileContext {
  /**
   * Takes the next consecutive slice of the visitor bucket. Percentage rules call it in
   * evaluation order, so two 50 % rules get [0, 50) and [50, 100).
   */
  takeSlice(percentage: number): { start: number; end: number };
}

// Method syntax on purpose: it keeps parameters bivariant so that every concrete matcher
// fits the registry's Matcher<C, unknown> slot.
export interface Matcher<Conditions, Compiled> {
  compile(conditions: Conditions, ctx: CompileContext): Compiled;
  hydrate(compiled: Compiled): Predicate;
}

export const never: Predicate = () => false;
