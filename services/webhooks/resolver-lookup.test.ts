import { pbkdf2 } from 'node:crypto';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkedLookup, type ResolveAll } from './checked-lookup.ts';
import { DNS_DEADLINE_MS, resolverLookup } from './resolver-lookup.ts';
import { startTestDnsServer, type TestDnsServer } from './testing/dns-server.ts';

type Outcome = { err: (Error & { code?: string }) | null; addresses: LookupAddress[] };

function resolveAll(resolve: ResolveAll, hostname: string, options: LookupOptions = {}): Promise<Outcome> {
  return new Promise((done) => resolve(hostname, { ...options, all: true }, (err, addresses) => done({ err, addresses })));
}

/** As a connection asks: one address. */
function connectLookup(lookup: ReturnType<typeof checkedLookup>, hostname: string): Promise<{ err: (Error & { code?: string }) | null; address?: string | LookupAddress[] }> {
  return new Promise((resolve) => lookup(hostname, {}, (err, address) => resolve({ err, address })));
}

const HANGING = Array.from({ length: 8 }, (_, i) => `hang-${i}.example.com`);

describe("the webhook sender's resolver (c-ares, against DNS servers on loopback)", () => {
  let dns: TestDnsServer;
  /** A second server that answers nothing: with it, a hanging name outlasts c-ares's own tries. */
  let silent: TestDnsServer;
  const names = () => resolverLookup({ servers: [dns.server] });

  beforeAll(async () => {
    dns = await startTestDnsServer({
      'hooks.example.com': { A: ['93.184.215.14', '93.184.215.15'], AAAA: ['2606:2800:21f:cb07:6820:80da:af6b:8b2c'] },
      'v4only.example.com': { A: ['93.184.215.16'] },
      'no-aaaa-answer.example.com': { A: ['93.184.215.18'], AAAA: 'hang' },
      'slow.example.com': { A: ['93.184.215.19'], delayMs: 1_500 },
      'internal.example.com': { A: ['93.184.215.17', '10.0.0.7'] },
      'broken.example.com': 'servfail',
      ...Object.fromEntries(HANGING.map((name) => [name, 'hang' as const])),
    });
    silent = await startTestDnsServer(Object.fromEntries(HANGING.map((name) => [name, 'hang' as const])));
  });
  afterAll(async () => {
    await dns.close();
    await silent.close();
  });

  it('answers both families, IPv4 first, or the family asked for; a name with one family answers that one', async () => {
    const { resolve } = names();
    expect(await resolveAll(resolve, 'hooks.example.com')).toEqual({
      err: null,
      addresses: [
        { address: '93.184.215.14', family: 4 },
        { address: '93.184.215.15', family: 4 },
        { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
      ],
    });
    expect((await resolveAll(resolve, 'hooks.example.com', { family: 6 })).addresses).toEqual([{ address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 }]);
    expect((await resolveAll(resolve, 'HOOKS.example.com.', { family: 'IPv4' })).addresses).toHaveLength(2);
    expect(await resolveAll(resolve, 'v4only.example.com')).toEqual({ err: null, addresses: [{ address: '93.184.215.16', family: 4 }] });
  });

  it('connects over IPv4 when the AAAA question is never answered, without waiting for it', async () => {
    const { resolve } = names();
    expect(await resolveAll(resolve, 'no-aaaa-answer.example.com')).toEqual({ err: null, addresses: [{ address: '93.184.215.18', family: 4 }] });
  });

  it('hears a server that takes 1.5 s, however many quick answers came before (c-ares would have learnt a shorter timeout)', async () => {
    const { resolve } = names();
    for (let i = 0; i < 10; i++) expect((await resolveAll(resolve, 'v4only.example.com')).err).toBeNull();
    expect(await resolveAll(resolve, 'slow.example.com', { family: 4 })).toEqual({ err: null, addresses: [{ address: '93.184.215.19', family: 4 }] });
  });

  it('says ENOTFOUND for a name that does not exist, and passes a server failure on as itself', async () => {
    const { resolve } = names();
    const missing = await resolveAll(resolve, 'missing.example.com');
    expect(missing.err?.code).toBe('ENOTFOUND');
    expect(missing.err?.message).toBe('ENOTFOUND missing.example.com: no address in DNS');
    expect(missing.addresses).toEqual([]);
    expect((await resolveAll(resolve, 'broken.example.com')).err?.code).toBe('ESERVFAIL');
  });

  it('answers localhost and the names under it as loopback without asking, so the SSRF check refuses them', async () => {
    const { resolve } = names();
    const before = dns.asked.length;
    expect((await resolveAll(resolve, 'localhost')).addresses).toEqual([{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]);
    expect((await resolveAll(resolve, 'api.LOCALHOST.', { family: 6 })).addresses).toEqual([{ address: '::1', family: 6 }]);
    expect(dns.asked.length).toBe(before);
    const refused = await connectLookup(checkedLookup(resolve), 'hooks.localhost');
    expect(refused.err?.message).toBe('hooks.localhost resolves to a blocked address (loopback); not an allowed webhook target');
  });

  it('refuses, through the SSRF check, a name any of whose DNS answers is a private address', async () => {
    const lookup = checkedLookup(names().resolve);
    const refused = await connectLookup(lookup, 'internal.example.com');
    expect(refused.err?.code).toBe('EBLOCKEDTARGET');
    expect(await connectLookup(lookup, 'v4only.example.com')).toEqual({ err: null, address: '93.184.215.16' });
  });

  it('ends the lookups under way when the sender closes', async () => {
    const lookup = names();
    const pending = resolveAll(lookup.resolve, HANGING[0]!);
    lookup.cancelAll();
    expect((await pending).err?.code).toBe('ECANCELLED');
  });

  it(
    "holds no thread while names' DNS hangs: other names, file reads and crypto go on, and the hanging ones end at the deadline",
    async () => {
      // Two servers, both silent for these names: c-ares alone would ask each twice (~15 s).
      const lookup = checkedLookup(resolverLookup({ servers: [dns.server, silent.server] }).resolve);
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
      for (const outcome of await Promise.all(hanging)) {
        expect(outcome.err?.code).toBe('ETIMEOUT');
        expect(outcome.err?.message).toMatch(new RegExp(`^ETIMEOUT hang-\\d\\.example\\.com: no answer from DNS within ${DNS_DEADLINE_MS} ms$`));
      }
      for (const name of HANGING) expect([dns.asked, silent.asked].map((asked) => asked.includes(`${name} A`))).toEqual([true, true]);
    },
    DNS_DEADLINE_MS + 10_000,
  );
});
