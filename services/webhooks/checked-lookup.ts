import type { LookupAddress, LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { blockedAddressReason } from '../../shared/webhooks/target-address.ts';

/** A webhook target whose name resolves to an address webhooks may not reach (SSRF). */
export class BlockedTargetError extends Error {
  readonly code = 'EBLOCKEDTARGET';
}

/** A lookup answering every address at once, as `dns.lookup` with `all: true` does (the sender's: resolver-lookup.ts). */
export type ResolveAll = (hostname: string, options: LookupOptions & { all: true }, callback: (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void) => void;

type Answer = (err: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void;

/**
 * The sender's DNS lookup: refuses names resolving to any address webhooks may not
 * reach (SSRF). The socket connects only to an address checked here, at send time, so
 * a name re-pointed at a private address after registration is refused too.
 *
 * Lookups of one name under way are shared: a burst of new connections to one host (up
 * to WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT for each of its endpoints) asks its DNS once,
 * not once per connection. Nothing is kept once answered: the next connection asks
 * again, so a re-pointed name is seen at once.
 */
export function checkedLookup(resolve: ResolveAll): LookupFunction {
  const underWay = new Map<string, Answer[]>();
  return (hostname, options, callback) => {
    const answer: Answer = (err, addresses) => {
      if (err) return callback(err, '', 4);
      if (addresses.length === 0) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), '', 4);
      for (const { address } of addresses) {
        const reason = blockedAddressReason(address);
        // The address itself is not named: the message reaches the endpoint's workspace
        // (its deliveries), which must not learn what names resolve to on this network.
        if (reason) return callback(new BlockedTargetError(`${hostname} resolves to a blocked address (${reason}); not an allowed webhook target`), '', 4);
      }
      if (options.all) (callback as unknown as (err: null, all: LookupAddress[]) => void)(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    };
    const asked = { ...options, all: true as const };
    const key = `${hostname}\n${JSON.stringify(asked)}`;
    const waiting = underWay.get(key);
    if (waiting) {
      waiting.push(answer);
      return;
    }
    // Invariant: an entry is removed before its answers run, and whatever happens to its
    // lookup, so a name is never left waiting on a question nobody will answer.
    const answers: Answer[] = [answer];
    underWay.set(key, answers);
    const done = () => {
      if (underWay.get(key) === answers) underWay.delete(key);
    };
    try {
      resolve(hostname, asked, (err, addresses) => {
        done();
        for (const a of answers) a(err, addresses);
      });
    } catch (err) {
      done();
      throw err;
    }
  };
}
