import { describe, expect, it } from 'vitest';
import { makeLink, makeRule } from './fixtures.ts';
import { compileLink, hydrateLink, RoutingError, type CompiledLink, type RuleRecord } from './index.ts';

describe('RoutingError', () => {
  it('names what the engine cannot compile or hydrate by a stable code', () => {
    const codeOf = (run: () => unknown) => {
      try {
        run();
      } catch (err) {
        if (err instanceof RoutingError) return err.code;
        throw err;
      }
      return 'none';
    };
    expect(codeOf(() => compileLink(makeLink({ expiresAt: 'next tuesday' }), [], []))).toBe('TIMESTAMP_INVALID');
    const unknownRule = { ...makeRule('geo', { countries: ['DE'], operator: 'in' }), type: 'weather' } as unknown as RuleRecord;
    expect(codeOf(() => compileLink(makeLink(), [unknownRule], []))).toBe('RULE_TYPE_UNKNOWN');
    const future = { ...compileLink(makeLink(), [], []), v: 99 } as unknown as CompiledLink;
    expect(codeOf(() => hydrateLink(future))).toBe('COMPILED_FORMAT_UNSUPPORTED');
    expect(codeOf(() => hydrateLink(compileLink(makeLink(), [], [])))).toBe('none');
  });
});
