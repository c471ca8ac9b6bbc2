/**
 * The per-User-Agent work of a redirect, cached together: the parsed facts (device
 * class, OS, browser, bot) and the SHA-256 the visitor hash takes of the UA.
 *
 * Why here and not only in the shared caches: parseUserAgent and hashedVisitorId each
 * keep an LRU that re-inserts the entry on every hit (a Map delete and set), so a redirect
 * paid for two reorderings per request. Real traffic repeats a small set of UA strings,
 * so an exact order is not worth that: this cache keeps two generations (entries move to
 * the young one when used, the old one is dropped when the young one fills), which keeps
 * the working set at the cost of one Map lookup per hit and bounds memory at 2 x `max`
 * entries whatever clients send.
 */
import { parseUserAgent, type UserAgentFacts } from '../../../shared/request-facts/user-agent.ts';
import { userAgentDigest } from '../../../shared/visitor.ts';

export interface UserAgentWork {
  facts: UserAgentFacts;
  /** userAgentDigest(userAgent), for hashedVisitorIdFromDigest. */
  digest: Buffer;
}

/** Same cut as the UA parser and the visitor hash: both read only this much. */
const MAX_UA_LENGTH = 512;

export class UserAgentWorkCache {
  readonly max: number;
  #young = new Map<string, UserAgentWork>();
  #old = new Map<string, UserAgentWork>();

  constructor(max = 10_000) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('UserAgentWorkCache max must be a positive integer');
    this.max = max;
  }

  get(userAgent: string): UserAgentWork {
    const key = userAgent.length > MAX_UA_LENGTH ? userAgent.slice(0, MAX_UA_LENGTH) : userAgent;
    let work = this.#young.get(key);
    if (work !== undefined) return work;
    work = this.#old.get(key);
    if (work === undefined) work = Object.freeze({ facts: parseUserAgent(key), digest: userAgentDigest(key) });
    if (this.#young.size >= this.max) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(key, work);
    return work;
  }

  /** Entries held (both generations; a key may be in both). */
  get size(): number {
    return this.#young.size + this.#old.size;
  }
}
