/**
 * The wrong-password limits of password-protected links, and the keys they count by:
 * PASSWORD_ATTEMPTS_PER_MINUTE wrong answers per (visitor, link); four times that per
 * (client address, link), so that dropping the cookie and rotating User-Agents (a new
 * hashed visitor id each time) does not lift it; twelve times that per client address
 * across every link, so a workspace's hundreds of protected links do not multiply one
 * address's scrypt work. An IPv6 client address counts as its /64 (throttledAddress).
 *
 * Invariant: the keys are a function of the request and the deployment's secret alone
 * (keyed hashes, the link id), so every redirector sharing LINKROUTE_SECRET derives the
 * same keys for the same guess: a failure another redirector reports by its keys is
 * charged here as if it had been checked here (password-failure-share.ts).
 */
import { createHmac } from 'node:crypto';
import { PasswordThrottle } from './password-throttle.ts';
import { throttledAddress } from './throttled-address.ts';

const ADDRESS_LIMIT_FACTOR = 4;
const ALL_LINKS_FACTOR = 12;

/** What one guess is counted under, one key per limit. */
export interface PasswordLimitKeys {
  visitorAndLink: string;
  addressAndLink: string;
  address: string;
}

export class PasswordLimits {
  readonly #byVisitor: PasswordThrottle;
  readonly #byAddress: PasswordThrottle;
  readonly #byAddressAllLinks: PasswordThrottle;
  /** Keys the address hashes; derived, so the secret itself keys nothing else. */
  readonly #addressKey: Buffer;

  constructor(attemptsPerMinute: number, secret: Buffer) {
    this.#byVisitor = new PasswordThrottle(attemptsPerMinute);
    this.#byAddress = new PasswordThrottle(attemptsPerMinute * ADDRESS_LIMIT_FACTOR);
    this.#byAddressAllLinks = new PasswordThrottle(attemptsPerMinute * ALL_LINKS_FACTOR);
    this.#addressKey = createHmac('sha256', secret).update('linkroute:password-throttle-address').digest();
  }

  keysOf(visitorId: string, ip: string, linkId: string): PasswordLimitKeys {
    // The address key is itself a keyed hash: no raw IP is kept in the throttle (nor sent to
    // other redirectors). Not the visitor hash, whose key changes at UTC midnight: an
    // address's minute spanning midnight started afresh there.
    const address = createHmac('sha256', this.#addressKey).update(throttledAddress(ip)).digest('base64url');
    return { visitorAndLink: `${visitorId}\n${linkId}`, addressAndLink: `${address}\n${linkId}`, address };
  }

  /** Seconds until a guess under `keys` may be checked; 0 when it may be now. */
  retryAfter(keys: PasswordLimitKeys, now: number): number {
    return Math.max(
      this.#byVisitor.retryAfter(keys.visitorAndLink, now),
      this.#byAddress.retryAfter(keys.addressAndLink, now),
      this.#byAddressAllLinks.retryAfter(keys.address, now),
    );
  }

  /** Counts a guess (or a failure reported by another redirector) under every key at `now`. */
  charge(keys: PasswordLimitKeys, now: number): void {
    this.#byVisitor.charge(keys.visitorAndLink, now);
    this.#byAddress.charge(keys.addressAndLink, now);
    this.#byAddressAllLinks.charge(keys.address, now);
  }

  /** Takes back a guess charged at `chargedAt` that turned out right. */
  refund(keys: PasswordLimitKeys, chargedAt: number): void {
    this.#byVisitor.refund(keys.visitorAndLink, chargedAt);
    this.#byAddress.refund(keys.addressAndLink, chargedAt);
    this.#byAddressAllLinks.refund(keys.address, chargedAt);
  }
}
