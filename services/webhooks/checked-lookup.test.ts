import type { LookupAddress, LookupOptions } from 'node:dns';
import { describe, expect, it } from 'vitest';
import { checkedLookup, type ResolveAll } from './checked-lookup.ts';

/** A resolver answering each name from `table` when the test releases it, counting the questions. */
function heldResolver(table: Record<string, string[]>) {
  const asked: string[] = [];
  const held: Array<() => void> = [];
  const resolve: ResolveAll = (hostname, options, callback) => {
    asked.push(`${hostname} family=${options.family ?? 0}`);
    held.push(() => {
      const addresses = table[hostname];
      if (!addresses) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
      callback(null, addresses.map((address): LookupAddress => ({ address, family: address.includes(':') ? 6 : 4 })));
    });
  };
  return { resolve, asked, release: () => held.splice(0).forEach((answer) => answer()) };
}

type Outcome = { err: (Error & { code?: string }) | null; address?: string | LookupAddress[]; family?: number };

function lookUp(lookup: ReturnType<typeof checkedLookup>, hostname: string, options: LookupOptions = {}): Promise<Outcome> {
  return new Promise((resolve) => {
    lookup(hostname, options, (err: Error | null, address: string | LookupAddress[], family?: number) => resolve({ err, address, family }));
  });
}

describe('the webhook sender\'s DNS lookup', () => {
  it('asks once for a burst of connections to one name, and answers every one of them', async () => {
    const dns = heldResolver({ 'hooks.example.com': ['93.184.215.14'] });
    const lookup = checkedLookup(dns.resolve);
    const burst = Array.from({ length: 32 }, () => lookUp(lookup, 'hooks.example.com'));
    const listed = lookUp(lookup, 'hooks.example.com', { all: true });
    const otherFamily = lookUp(lookup, 'hooks.example.com', { family: 4 });
    expect(dns.asked).toEqual(['hooks.example.com family=0', 'hooks.example.com family=4']);
    dns.release();
    for (const outcome of await Promise.all(burst)) expect(outcome).toEqual({ err: null, address: '93.184.215.14', family: 4 });
    expect((await listed).address).toEqual([{ address: '93.184.215.14', family: 4 }]);
    expect((await otherFamily).address).toBe('93.184.215.14');
  });

  it('keeps nothing once answered: the next connection asks again, so a re-pointed name is refused at once', async () => {
    const table: Record<string, string[]> = { 'hooks.example.com': ['93.184.215.14'] };
    const dns = heldResolver(table);
    const lookup = checkedLookup(dns.resolve);
    const first = lookUp(lookup, 'hooks.example.com');
    dns.release();
    expect((await first).err).toBeNull();
    table['hooks.example.com'] = ['10.0.0.7'];
    const second = Array.from({ length: 3 }, () => lookUp(lookup, 'hooks.example.com'));
    dns.release();
    for (const outcome of await Promise.all(second)) {
      expect(outcome.err?.code).toBe('EBLOCKEDTARGET');
      expect(outcome.err?.message).toBe('hooks.example.com resolves to a blocked address (private); not an allowed webhook target');
    }
    expect(dns.asked).toHaveLength(2);
  });

  it('refuses a name when any of its addresses is blocked, and passes a failed lookup to every waiter', async () => {
    const dns = heldResolver({ 'mixed.example.com': ['93.184.215.14', '169.254.169.254'] });
    const lookup = checkedLookup(dns.resolve);
    const mixed = lookUp(lookup, 'mixed.example.com', { all: true });
    const missing = [lookUp(lookup, 'missing.example.com'), lookUp(lookup, 'missing.example.com')];
    dns.release();
    expect((await mixed).err?.message).toMatch(/^mixed\.example\.com resolves to a blocked address \(link-local or metadata[^)]*\)/);
    for (const outcome of await Promise.all(missing)) expect(outcome.err?.code).toBe('ENOTFOUND');
    expect(dns.asked).toEqual(['mixed.example.com family=0', 'missing.example.com family=0']);
  });

  it("shares one question between the option shapes Node's net passes (with and without all), and answers an IPv6 address with its family", async () => {
    const dns = heldResolver({ 'v6.example.com': ['2606:2800:21f:cb07:6820:80da:af6b:8b2c'] });
    const lookup = checkedLookup(dns.resolve);
    const single = lookUp(lookup, 'v6.example.com', { family: 0, hints: 1024 });
    const all = lookUp(lookup, 'v6.example.com', { family: 0, hints: 1024, all: true });
    expect(dns.asked).toEqual(['v6.example.com family=0']);
    dns.release();
    expect(await single).toEqual({ err: null, address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 });
    expect((await all).address).toEqual([{ address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 }]);
  });

  it('leaves no name waiting when the resolver throws: the throw reaches the caller, the next lookup asks afresh', async () => {
    const dns = heldResolver({ 'hooks.example.com': ['93.184.215.14'] });
    let throwNext = true;
    const lookup = checkedLookup((hostname, options, callback) => {
      if (throwNext) {
        throwNext = false;
        throw new TypeError('bad lookup options');
      }
      dns.resolve(hostname, options, callback);
    });
    expect(() => lookup('hooks.example.com', {}, () => undefined)).toThrow('bad lookup options');
    const next = lookUp(lookup, 'hooks.example.com');
    dns.release();
    expect(await next).toEqual({ err: null, address: '93.184.215.14', family: 4 });
  });
});
