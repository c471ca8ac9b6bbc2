import { Resolver, type LookupAddress } from 'node:dns';
import type { ResolveAll } from './checked-lookup.ts';

/**
 * A lookup's questions go to each server of /etc/resolv.conf twice, first waiting 2.5 s
 * for an answer, then (c-ares doubles it) 5 s: a server answering within 2.5 s is always
 * heard. The whole lookup ends after DNS_DEADLINE_MS whatever the servers do, inside the
 * attempt's own deadline (WEBHOOKS_TIMEOUT_MS, 10 s by default).
 */
const DNS_TIMEOUT_MS = 2_500;
const DNS_TRIES = 2;
export const DNS_DEADLINE_MS = 8_000;
/**
 * Once one family has answered with addresses, how long the other still has (RFC 8305's
 * resolution delay, with room for a loaded machine): a server that never answers AAAA
 * questions (some middleboxes drop them) does not hold up connecting over IPv4.
 */
export const OTHER_FAMILY_GRACE_MS = 300;

export interface ResolverLookup {
  resolve: ResolveAll;
  /** Ends the lookups under way (each answers ECANCELLED): for the sender's close(). */
  cancelAll(): void;
}

/**
 * The sender's name resolution for public targets: c-ares (`dns.Resolver`), which asks
 * the servers of /etc/resolv.conf itself, with timeouts of its own, from the event loop.
 *
 * Not getaddrinfo (`dns.lookup`, Node's default): each of its lookups holds one of
 * libuv's four pool threads until the system resolver gives up (10 s and more with
 * resolv.conf's defaults), and the pool also runs the process's file, crypto and zlib
 * work. Webhook targets are chosen by workspaces, so four endpoints on names whose DNS
 * hangs held every thread: every other endpoint's new connections waited behind them,
 * their attempts' deadlines running. With c-ares a hanging name costs a timer.
 *
 * A resolver per lookup (~20 µs to make; lookups come only with new connections, as
 * connections are kept alive): a long-lived c-ares channel (1.34) replaces the timeouts
 * configured with ones learnt from past answers (5 x the server's average), so once
 * warm it gave up on a name answered in 1.5 s after 2 s, where getaddrinfo waits 5 s.
 * A new one also reads /etc/resolv.conf as it is now, as getaddrinfo does.
 *
 * What differs from getaddrinfo: /etc/hosts and the system's other name sources (NSS)
 * are not read. `localhost` and the names under it answer the loopback addresses
 * (RFC 6761), so they are refused as loopback, as they were. Both families are asked
 * whatever addresses the host has (getaddrinfo's ADDRCONFIG hint is not applied), and
 * every answer is checked. With WEBHOOKS_ALLOW_PRIVATE_TARGETS the sender keeps the
 * system's lookup, /etc/hosts and all (tests, private deployments).
 *
 * Answers IPv4 addresses before IPv6 ones: the connection tries them in turn (Node's
 * family autoselection), and a container often has no IPv6 route.
 */
export function resolverLookup(options: { /** `host:port` of the DNS servers to ask; default: /etc/resolv.conf's (tests give their own). */ servers?: string[] } = {}): ResolverLookup {
  const newResolver = () => {
    const resolver = new Resolver({ timeout: DNS_TIMEOUT_MS, tries: DNS_TRIES });
    if (options.servers) resolver.setServers(options.servers);
    return resolver;
  };
  const underWay = new Set<Resolver>();
  const resolve: ResolveAll = (hostname, options, callback) => {
    const family = familyOf(options.family);
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost')) {
      const loopback: LookupAddress[] = [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];
      return callback(null, loopback.filter((a) => family === 0 || a.family === family));
    }
    const resolver = newResolver();
    underWay.add(resolver);
    const asked = family === 0 ? [4, 6] : [family];
    const answers = new Map<number, LookupAddress[] | NodeJS.ErrnoException>();
    let grace: NodeJS.Timeout | undefined;
    let settled = false;
    const deadline = setTimeout(() => settle(), DNS_DEADLINE_MS).unref();

    /** Answers once: with every address found so far, or why there is none. */
    function settle() {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      clearTimeout(grace);
      underWay.delete(resolver);
      // Questions still open (at the deadline or the grace's end: a timer, never inside a
      // c-ares callback) end here, and their late answers are ignored.
      if (answers.size < asked.length) resolver.cancel();
      const found = asked.flatMap((f) => {
        const answer = answers.get(f);
        return Array.isArray(answer) ? answer : [];
      });
      if (found.length > 0) return callback(null, found);
      callback(failure(hostname, asked.map((f) => answers.get(f))), []);
    }

    for (const f of asked) {
      const answer = (err: NodeJS.ErrnoException | null, addresses: string[]) => {
        if (settled) return;
        answers.set(f, err ?? addresses.map((address) => ({ address, family: f })));
        if (answers.size === asked.length) return settle();
        if (!err && addresses.length > 0) grace = setTimeout(settle, OTHER_FAMILY_GRACE_MS).unref();
      };
      if (f === 4) resolver.resolve4(hostname, answer);
      else resolver.resolve6(hostname, answer);
    }
  };
  return {
    resolve,
    cancelAll() {
      for (const resolver of underWay) resolver.cancel();
    },
  };
}

/**
 * Why a lookup found no address. "No such name" only when every question said so (a name
 * with only the other family's records answers NODATA); a timeout or a server failure is
 * passed on as itself, so the delivery's error says what happened; a question with no
 * answer at all is a timeout (the deadline ended it).
 */
function failure(hostname: string, answers: Array<LookupAddress[] | NodeJS.ErrnoException | undefined>): NodeJS.ErrnoException {
  for (const answer of answers) {
    if (answer === undefined) return Object.assign(new Error(`ETIMEOUT ${hostname}: no answer from DNS within ${DNS_DEADLINE_MS} ms`), { code: 'ETIMEOUT', hostname });
    if (!Array.isArray(answer) && answer.code !== 'ENODATA' && answer.code !== 'ENOTFOUND') return answer;
  }
  return Object.assign(new Error(`ENOTFOUND ${hostname}: no address in DNS`), { code: 'ENOTFOUND', hostname });
}

/** dns.lookup's `family` option: 0, 4 or 6, or 'IPv4' / 'IPv6'. */
function familyOf(family: number | string | undefined): 0 | 4 | 6 {
  if (family === 4 || family === 'IPv4') return 4;
  if (family === 6 || family === 'IPv6') return 6;
  return 0;
}
