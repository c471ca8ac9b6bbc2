import { BlockList, isIP } from 'node:net';

/**
 * Where webhooks may not go (SSRF): the sender's own machine and networks, and cloud
 * metadata services. Checked on every address a target's name resolves to, at send
 * time (a name can be re-pointed after the endpoint was registered), and on IP
 * literals when an endpoint is registered. Only public unicast addresses pass.
 */
const blocked = new BlockList();
const ranges: Array<[string, number, 'ipv4' | 'ipv6', string]> = [
  ['0.0.0.0', 8, 'ipv4', 'unspecified'],
  ['10.0.0.0', 8, 'ipv4', 'private'],
  ['100.64.0.0', 10, 'ipv4', 'shared address space'],
  ['127.0.0.0', 8, 'ipv4', 'loopback'],
  ['169.254.0.0', 16, 'ipv4', 'link-local or metadata'],
  ['172.16.0.0', 12, 'ipv4', 'private'],
  ['192.0.0.0', 24, 'ipv4', 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'ipv4', 'documentation'],
  ['192.168.0.0', 16, 'ipv4', 'private'],
  ['198.18.0.0', 15, 'ipv4', 'benchmarking'],
  ['198.51.100.0', 24, 'ipv4', 'documentation'],
  ['203.0.113.0', 24, 'ipv4', 'documentation'],
  ['224.0.0.0', 4, 'ipv4', 'multicast'],
  ['240.0.0.0', 4, 'ipv4', 'reserved'],
  ['::', 128, 'ipv6', 'unspecified'],
  ['::1', 128, 'ipv6', 'loopback'],
  // ::a.b.c.d, IPv4-compatible (deprecated, RFC 4291): nothing public lives there.
  ['::', 96, 'ipv6', 'IPv4-compatible (deprecated)'],
  ['64:ff9b:1::', 48, 'ipv6', 'local NAT64'],
  ['100::', 64, 'ipv6', 'discard'],
  ['2001:db8::', 32, 'ipv6', 'documentation'],
  // Teredo: its IPv4 addresses are obfuscated in it; nothing a webhook should reach.
  ['2001::', 32, 'ipv6', 'Teredo'],
  ['fc00::', 7, 'ipv6', 'unique local (private)'],
  ['fe80::', 10, 'ipv6', 'link-local'],
  ['fec0::', 10, 'ipv6', 'site-local'],
  ['ff00::', 8, 'ipv6', 'multicast'],
];
for (const [address, prefix, family] of ranges) blocked.addSubnet(address, prefix, family);

/** An IPv6 address (valid: isIP said so) as its eight 16-bit groups, `::` and a trailing dotted quad expanded. */
function hextets(address: string): number[] {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone !== -1) text = text.slice(0, zone);
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const groups = (part: string) => (part === '' ? [] : part.split(':').map((h) => parseInt(h, 16)));
  const [head, tail] = text.split('::') as [string, string | undefined];
  if (tail === undefined) return groups(head);
  const [before, after] = [groups(head), groups(tail)];
  return [...before, ...new Array<number>(8 - before.length - after.length).fill(0), ...after];
}

/**
 * IPv4 inside IPv6, however the address is written (`2002:7f00::1` as `2002:7f00:0:...`):
 * mapped ::ffff:a.b.c.d, translated ::ffff:0:a.b.c.d, NAT64 64:ff9b::a.b.c.d and 6to4
 * 2002:aabb:ccdd::: the IPv4 address it reaches, or null.
 */
function embeddedIpv4(address: string): string | null {
  const h = hextets(address);
  const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  const zeros = (from: number, to: number) => h.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && h[5] === 0xffff) return v4(h[6]!, h[7]!);
  if (zeros(0, 4) && h[4] === 0xffff && h[5] === 0) return v4(h[6]!, h[7]!);
  if (h[0] === 0x64 && h[1] === 0xff9b && zeros(2, 6)) return v4(h[6]!, h[7]!);
  if (h[0] === 0x2002) return v4(h[1]!, h[2]!);
  return null;
}

/** Why an address may not be a webhook target, or null when it may. */
export function blockedAddressReason(address: string): string | null {
  const family = isIP(address);
  if (family === 0) return 'not an IP address';
  if (family === 6) {
    const v4 = embeddedIpv4(address);
    if (v4 !== null) return blockedAddressReason(v4);
  }
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (!blocked.check(address, type)) return null;
  for (const [range, prefix, rangeType, reason] of ranges) {
    if (rangeType !== type) continue;
    const one = new BlockList();
    one.addSubnet(range, prefix, rangeType);
    if (one.check(address, type)) return reason;
  }
  return 'not a public address';
}

/** Host names that always mean this machine, whatever DNS says (`localhost.` too: the root's dot). */
const LOCAL_NAMES = /(^|\.)(localhost|localhost\.localdomain)\.?$/i;

/**
 * Checked when an endpoint is registered: an IP literal or a local name in the URL
 * is refused at once. Other names are not resolved here (DNS can change): they are
 * checked, resolved, at every send.
 */
export function blockedUrlReason(url: string): string | null {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
  if (LOCAL_NAMES.test(host)) return 'a local host name';
  return isIP(host) === 0 ? null : blockedAddressReason(host);
}
