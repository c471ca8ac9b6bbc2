import { Resolver, type LookupAddress } from 'node:dns';
import type { ResolveAll } from './checked-lookup.ts';

/**
 * How long one question waits for a server before it is asked again, and how often it is
 * asked: a name whose DNS never answers fails after about 2 + 4 s (c-ares doubles the wait
 * on each try), inside the attempt's own deadline (WEBHOOKS_TIMEOUT_MS, 10 s by default).
 */
export const DNS_TIMEOUT_MS = 2_000;
export const DNS_TRIES = 2;

/**
 * The sender's name resolution for public targets: c-ares (`dns.Resolver`), which asks
 * the servers of /etc/resolv.conf itself, with a timeout of its own, from the event loop.
 *
 * Not getaddrinfo (`dns.lookup`, Node's default): each of its lookups holds one of
 * libuv's four pool threads until the system resolver gives up (10 s and more with
 * resolv.conf's defaults), and the pool also runs the process's file, crypto and zlib
 * work. Webhook targets are chosen by workspaces, so four endpoints on names whose DNS
 * hangs held every thread: every other endpoint's new connections waited behind them,
 * their attempts' deadlines running. With c-ares a hanging name costs a timer.
 *
 * What differs from getaddrinfo: /etc/hosts and the system's other name sources (NSS)
 * are not read. `localhost` and the names under it answer the loopback addresses
 * (RFC 6761), so they are refused as loopback, as they were. With
 * WEBHOOKS_ALLOW_PRIVATE_TARGETS the sender keeps the system's lookup, /etc/hosts and
 * all (tests, private deployments).
 *
 * Answers IPv4 addresses before IPv6 ones: the connection tries them in turn (Node's
 * family autoselection), and a container often has no IPv6 route.
 */
export function resolverLookup(resolver: Resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: DNS_TRIES })): ResolveAll {
  return (hostname, options, callback) => {
    const family = familyOf(options.family);
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost')) {
      const loopback: LookupAddress[] = [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];
      return callback(null, loopback.filter((a) => family === 0 || a.family === family));
    }
    const asked = family === 0 ? [4, 6] : [family];
    const answers = new Map<number, LookupAddress[] | NodeJS.ErrnoException>();
    for (const f of asked) {
      const answer = (err: NodeJS.ErrnoException | null, addresses: string[]) => {
        answers.set(f, err ?? addresses.map((address) => ({ address, family: f })));
        if (answers.size === asked.length) settle();
      };
      if (f === 4) resolver.resolve4(hostname, answer);
      else resolver.resolve6(hostname, answer);
    }
    function settle() {
      const found = asked.flatMap((f) => {
        const answer = answers.get(f)!;
        return Array.isArray(answer) ? answer : [];
      });
      if (found.length > 0) return callback(null, found);
      // No address in either family: "no such name" only when every question said so (a
      // name with only the other family's records answers NODATA); a timeout or a server
      // failure is passed on as itself, so the delivery's error says what happened.
      const failures = asked.map((f) => answers.get(f)).filter((a): a is NodeJS.ErrnoException => !Array.isArray(a));
      const failure = failures.find((err) => err.code !== 'ENODATA' && err.code !== 'ENOTFOUND');
      callback(failure ?? Object.assign(new Error(`ENOTFOUND ${hostname}: no address in DNS`), { code: 'ENOTFOUND', hostname }), []);
    }
  };
}

/** dns.lookup's `family` option: 0, 4 or 6, or 'IPv4' / 'IPv6'. */
function familyOf(family: number | string | undefined): 0 | 4 | 6 {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}
