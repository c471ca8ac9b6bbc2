import { isIP } from 'node:net';
import { addressText } from './client-address.ts';

/**
 * The client address as the per-address throttle counts it: an IPv4 address (also one
 * written IPv4-mapped, as a dual-stack proxy may forward it) as it is, an IPv6 address as
 * its /64. One subscriber, host or VM usually holds a whole /64 (2^64 addresses), so
 * counting each IPv6 address alone would let a client lift the limit by taking a new
 * address from its own prefix for every few guesses. Anything else (a forwarded entry
 * that is no address) is its own key.
 */
export function throttledAddress(ip: string): string {
  if (isIP(ip) !== 6) return ip;
  // As the socket's address is written: RFC 5952 text, or the IPv4 client of a mapped one.
  const canonical = addressText(ip);
  if (!canonical.includes(':')) return canonical;
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':').flatMap((g) => (g.includes('.') ? dottedGroups(g) : [g])));
  const [head = '', tail] = canonical.split('::', 2);
  const left = groupsOf(head);
  const right = tail === undefined ? [] : groupsOf(tail);
  const groups = [...left, ...new Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups.slice(0, 4).join(':')}::/64`;
}

/** An embedded IPv4 address (`::1.2.3.4`) as the two IPv6 groups it stands for. */
function dottedGroups(dotted: string): string[] {
  const [a = 0, b = 0, c = 0, d = 0] = dotted.split('.').map(Number);
  return [((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}
