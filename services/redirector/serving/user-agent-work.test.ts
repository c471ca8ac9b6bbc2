import { describe, expect, it } from 'vitest';
import { realUserAgents } from '../../../shared/request-facts/sample-user-agents.ts';
import { parseUserAgent } from '../../../shared/request-facts/user-agent.ts';
import { userAgentDigest } from '../../../shared/visitor.ts';
import { UserAgentWorkCache } from './user-agent-work.ts';

describe('UserAgentWorkCache', () => {
  it('gives the parsed facts and the visitor-hash digest of a UA, the same object on a hit', () => {
    const cache = new UserAgentWorkCache();
    for (const ua of [...Object.values(realUserAgents), '', 'x'.repeat(600)]) {
      const work = cache.get(ua);
      expect(work.facts).toEqual(parseUserAgent(ua));
      expect(work.digest).toEqual(userAgentDigest(ua));
      expect(cache.get(ua)).toBe(work);
    }
  });

  it('treats UAs equal in their first 512 characters as one, like the parser and the hash', () => {
    const cache = new UserAgentWorkCache();
    const head = 'Mozilla/5.0 '.padEnd(512, 'x');
    expect(cache.get(`${head}a`)).toBe(cache.get(`${head}b`));
  });

  it('stays bounded and keeps what is used', () => {
    const cache = new UserAgentWorkCache(100);
    const hot = realUserAgents.iphoneSafari;
    const first = cache.get(hot);
    for (let i = 0; i < 10_000; i++) {
      cache.get(`bot-${i}/1.0`);
      if (i % 50 === 0) expect(cache.get(hot)).toBe(first);
      expect(cache.size).toBeLessThanOrEqual(100);
    }
  });
});
