/**
 * The per-User-Agent work of a redirect, cached together in the redirector's one
 * User-Agent cache: the parsed facts (device class, OS, browser, bot; ua-parser-js and
 * isbot cost ~10 µs a string) and the SHA-256 the visitor hash takes of the UA. Real
 * traffic repeats a small set of UA strings; the cache (lru-cache) is bounded whatever
 * clients send.
 *
 * lru-cache rather than the two-generation Map this was: a hit costs ~5 ns more, 0 % of
 * a redirect's server CPU (in process, batches alternating, busy 2-core machine,
 * 2026-11-26, commit a09dc8d's message; the hand-written cache is gone, so no bench row
 * compares them any more).
 */
import { LRUCache } from 'lru-cache';
import { parseUserAgent, type UserAgentFacts } from '../../../shared/request-facts/user-agent.ts';
import { userAgentDigest } from '../../../shared/visitor.ts';

export interface UserAgentWork {
  facts: UserAgentFacts;
  /** userAgentDigest(userAgent), for hashedVisitorIdFromDigest. */
  digest: Buffer;
}

/** Same cut as the UA parser and the visitor hash: both read only this much. */
const MAX_UA_LENGTH = 512;
const DEFAULT_MAX = 10_000;

export class UserAgentWorkCache {
  readonly #cache: LRUCache<string, UserAgentWork>;

  constructor(max = DEFAULT_MAX) {
    this.#cache = new LRUCache({ max });
  }

  /** The work for a UA; the object is shared and frozen: do not mutate it. */
  get(userAgent: string): UserAgentWork {
    const key = userAgent.length > MAX_UA_LENGTH ? userAgent.slice(0, MAX_UA_LENGTH) : userAgent;
    let work = this.#cache.get(key);
    if (work === undefined) {
      work = Object.freeze({ facts: Object.freeze(parseUserAgent(key)), digest: userAgentDigest(key) });
      this.#cache.set(key, work);
    }
    return work;
  }

  get size(): number {
    return this.#cache.size;
  }
}
