import { pbkdf2 } from 'node:crypto';
import { Resolver, type LookupAddress, type LookupOptions } from 'node:dns';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkedLookup } from './checked-lookup.ts';
import { resolverLookup } from './resolver-lookup.ts';
import { startTestDnsServer, type TestDnsServer } from './testing/dns-server.ts';

type Outcome = { err: (Error & { code?: string }) | null; addresses: LookupAddress[] };

function resolveAll(lookup: ReturnType<typeof resolverLookup>, hostname: string, options: LookupOptions = {}): Promise<Outcome> {
  return new Promise((resolve) => lookup(hostname, { ...options, all: true }, (err, addresses) => resolve({ err, addresses })));
}

/** As a connection asks: one address. */
function connectLookup(lookup: ReturnType<typeof checkedLookup>, hostname: string): Promise<{ err: (Error & { code?: string }) | null; address?: string | LookupAddress[] }> {
  return new Promise((resolve) => lookup(hostname, {}, (err, address) => resolve({ err, address })));
}

const HANGING = Array.from({ length: 8 }, (_, i) => `hang-${i}.example.com`);

describe("the webhook sender's resolver (c-ares, against a DNS server on loopback)", () => {
  let dns: TestDnsServer;
  const resolverFor = (options: { timeout: number; tries: number }) => {
    const resolver = new Resolver(options);
    resolver.setServers([dns.server]);
    return resolver;
  };

  beforeAll(async () => {
    dns = await startTestDnsServer({
      'hooks.example.com': { A: ['93.184.215.14', '93.184.215.15'], AAAA: ['2606:2800:21f:cb07:6820:80da:af6b:8b2c'] },
      'v4only.example.com': { A: ['93.184.215.16'] },
      'internal.example.com': { A: ['93.184.215.17', '10.0.0.7'] },
      'broken.example.com': 'servfail',
      ...Object.fromEntries(HANGING.map((name) => [name, 'hang' as const])),
    });
  });
  afterAll(() => dns.close());

  it('answers both families, IPv4 first, or the family asked for; a name with one family answers that one', async () => {
    const lookup = resolverLookup(resolverFor({ timeout: 2_000, tries: 2 }));
    expect(await resolveAll(lookup, 'hooks.example.com')).toEqual({
      err: null,
      addresses: [
        { address: '93.184.215.14', family: 4 },
        { address: '93.184.215.15', family: 4 },
        { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
      ],
    });
    expect((await resolveAll(lookup, 'hooks.example.com', { family: 6 })).addresses).toEqual([{ address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 }]);
    expect((await resolveAll(lookup, 'HOOKS.example.com.', { family: 'IPv4' })).addresses).toHaveLength(2);
    expect(await resolveAll(lookup, 'v4only.example.com')).toEqual({ err: null, addresses: [{ address: '93.184.215.16', family: 4 }] });
  });

  it('says ENOTFOUND for a name that does not exist, and passes a server failure on as itself', async () => {
    const lookup = resolverLookup(resolverFor({ timeout: 2_000, tries: 1 }));
    const missing = await resolveAll(lookup, 'missing.example.com');
    expect(missing.err?.code).toBe('ENOTFOUND');
    expect(missing.err?.message).toBe('ENOTFOUND missing.example.com: no address in DNS');
    expect(missing.addresses).toEqual([]);
    expect((await resolveAll(lookup, 'broken.example.com')).err?.code).toBe('ESERVFAIL');
  });

  it('answers localhost and the names under it as loopback without asking, so the SSRF check refuses them', async () => {
    const lookup = resolverLookup(resolverFor({ timeout: 2_000, tries: 1 }));
    const before = dns.asked.length;
    expect((await resolveAll(lookup, 'localhost')).addresses).toEqual([{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]);
    expect((await resolveAll(lookup, 'api.LOCALHOST.', { family: 6 })).addresses).toEqual([{ address: '::1', family: 6 }]);
    expect(dns.asked.length).toBe(before);
    const refused = await connectLookup(checkedLookup(lookup), 'hooks.localhost');
    expect(refused.err?.message).toBe('hooks.localhost resolves to a blocked address (loopback); not an allowed webhook target');
  });

  it('refuses, through the SSRF check, a name any of whose DNS answers is a private address', async () => {
    const lookup = checkedLookup(resolverLookup(resolverFor({ timeout: 2_000, tries: 1 })));
    const refused = await connectLookup(lookup, 'internal.example.com');
    expect(refused.err?.code).toBe('EBLOCKEDTARGET');
    expect(await connectLookup(lookup, 'v4only.example.com')).toEqual({ err: null, address: '93.184.215.16' });
  });

  it("holds no thread while names' DNS hangs: other names, file reads and crypto go on, and the hanging ones time out", async () => {
    const lookup = checkedLookup(resolverLookup(resolverFor({ timeout: 1_000, tries: 1 })));
    // More hanging names than libuv has pool threads (4): with getaddrinfo these would hold them all.
    const settled = new Set<string>();
    const hanging = HANGING.map((name) => connectLookup(lookup, name).then((outcome) => (settled.add(name), outcome)));
    const others = await Promise.all([
      connectLookup(lookup, 'v4only.example.com'),
      ...Array.from({ length: 8 }, () => readFile(new URL(import.meta.url))),
      ...Array.from({ length: 8 }, () => new Promise<Buffer>((resolve, reject) => pbkdf2('p', 's', 1, 32, 'sha256', (err, key) => (err ? reject(err) : resolve(key))))),
    ]);
    expect(others[0]).toEqual({ err: null, address: '93.184.215.16' });
    expect(settled.size).toBe(0);
    for (const outcome of await Promise.all(hanging)) expect(outcome.err?.code).toBe('ETIMEOUT');
    for (const name of HANGING) expect(dns.asked).toContain(`${name} A`);
  });
});
