import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/logger.ts';
import { createApiApp } from './app.ts';
import { startDomainRechecks } from './domain-rechecks.ts';
import { domainStore } from './stores/domain-store.ts';
import { loadApiConfig } from './config.ts';
import { listen, type RunningServer } from './server.ts';
import { loadCompiledLinks } from './snapshot/load-compiled-links.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';
import { startDnsServer, type DnsServer } from '../../shared/testing/dns-server.ts';
import { freePort } from '../../shared/testing/free-port.ts';

describe('custom domains, verified through a real DNS server', () => {
  let api: TestApi;
  let server: RunningServer;
  let dns: DnsServer;
  const records = new Map<string, string[]>();
  let key: string;

  const call = async (method: string, path: string, body?: unknown, k = key) => {
    const res = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${k}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    dns = await startDnsServer(records);
    api = await startTestApi('postgres');
    server = await listen(createApiApp({ sql: api.db.sql, config: loadApiConfig({ DNS_SERVERS: dns.address, REDIRECT_BASE_URL: 'http://go.test:8080' }), logger: createLogger('t', 'silent') }), 0, '127.0.0.1');
    ({ key } = await api.tenant());
  });
  afterAll(async () => {
    await server?.close();
    await api?.close();
    dns?.close();
  });

  it('registers, fails without the TXT record, verifies with it, then takes links on that host', async () => {
    const created = await call('POST', '/domains', { hostname: 'Go.Brand-Example.com.' });
    expect(created.status).toBe(201);
    const domain = created.body.data;
    expect(domain).toMatchObject({ hostname: 'go.brand-example.com', status: 'pending', failureReason: null, verifiedAt: null });
    // An internationalised name is kept as browsers send it in Host (IDNA), the form DNS holds.
    const idn = await call('POST', '/domains', { hostname: 'Links.Bücher-Beispiel.de' });
    expect(idn.status).toBe(201);
    expect(idn.body.data).toMatchObject({ hostname: 'links.xn--bcher-beispiel-gsb.de', status: 'pending' });
    // Nor names a browser reads otherwise: invalid punycode, an IPv4 address in hex, local names (fullwidth too).
    for (const hostname of ['bü@evil.example.com', 'bücher.de:8080', 'bü cher.de', 'http://bücher.de', 'xn--zz.com', '0x7f.0x1', '127.0.0.0x1', 'localhost.localdomain', 'ｌｏｃａｌｈｏｓｔ.ｌｏｃａｌｄｏｍａｉｎ', 'go.localhost']) {
      const refused = await call('POST', '/domains', { hostname });
      expect(refused.status, hostname).toBe(400);
    }
    expect(domain.verification).toEqual({ type: 'TXT', name: '_linkroute.go.brand-example.com', value: expect.stringMatching(/^linkroute-verify=/) });
    // Visitors reach the redirectors where the default domain (REDIRECT_BASE_URL http://go.test:8080) points.
    expect(domain.routing).toEqual({ type: 'CNAME', name: 'go.brand-example.com', value: 'go.test' });

    const early = await call('POST', '/links', { destinationUrl: 'https://brand.example', domainId: domain.id });
    expect(early.status).toBe(400);
    expect(early.body.error.details).toEqual([{ path: 'domainId', message: 'domain go.brand-example.com is not verified' }]);

    const missing = await call('POST', `/domains/${domain.id}/verify`);
    expect(missing.body.data).toMatchObject({ status: 'failed', failureReason: expect.stringContaining('no TXT record at _linkroute.go.brand-example.com') });
    records.set('_linkroute.go.brand-example.com', ['something else']);
    const wrong = await call('POST', `/domains/${domain.id}/verify`);
    expect(wrong.body.data.failureReason).toContain('none equals the expected value');
    records.set('_linkroute.go.brand-example.com', ['v=spf1 -all', domain.verification.value]);
    const verified = await call('POST', `/domains/${domain.id}/verify`);
    expect(verified.body.data).toMatchObject({ status: 'verified', failureReason: null, verifiedAt: expect.any(String) });

    const link = await call('POST', '/links', { destinationUrl: 'https://brand.example/sale', domainId: domain.id, shortCode: 'sale' });
    expect(link.status).toBe(201);
    expect(link.body.data).toMatchObject({ shortUrl: 'https://go.brand-example.com/sale', redirectDomain: 'go.brand-example.com', domainId: domain.id });
    // The same code is free on the default domain: codes are unique per domain.
    expect((await call('POST', '/links', { destinationUrl: 'https://brand.example', shortCode: 'sale' })).status).toBe(201);
    const compiled = await loadCompiledLinks(api.db.sql, [link.body.data.id]);
    expect(compiled.get(link.body.data.id)).toMatchObject({ domain: 'go.brand-example.com', shortCode: 'sale' });

    // Deleting the domain: its links stop resolving (published as gone), and stay readable.
    expect((await call('DELETE', `/domains/${domain.id}`)).body).toEqual({ success: true, data: { id: domain.id, deleted: true } });
    expect((await loadCompiledLinks(api.db.sql, [link.body.data.id])).get(link.body.data.id)).toBeNull();
    expect((await call('GET', `/links/${link.body.data.id}`)).status).toBe(200);
    expect((await call('DELETE', `/domains/${domain.id}`)).status).toBe(404);
    expect((await call('GET', '/domains')).body.data.map((d: { id: string }) => d.id)).not.toContain(domain.id);
  });

  it('several workspaces may claim a hostname; the first to verify owns it, the others turn failed with the reason; a verified hostname is 409 for anyone else', async () => {
    const squatter = await api.tenant();
    const owner = await api.tenant();
    const third = await api.tenant();
    const hostname = 'links.shared-example.org';
    // A squatter's pending claim blocks nobody, the real owner included.
    const squatted = await call('POST', '/domains', { hostname }, squatter.key);
    expect(squatted.status).toBe(201);
    const claimed = await call('POST', '/domains', { hostname: 'LINKS.shared-example.org' }, owner.key);
    expect(claimed.status).toBe(201);
    expect(claimed.body.data).toMatchObject({ hostname, status: 'pending' });
    expect(claimed.body.data.verification.value).not.toBe(squatted.body.data.verification.value);
    const thirdClaim = await call('POST', '/domains', { hostname }, third.key);
    expect(thirdClaim.status).toBe(201);
    // One live claim per workspace and hostname.
    const twice = await call('POST', '/domains', { hostname }, owner.key);
    expect(twice.status).toBe(409);
    expect(twice.body.error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('already registered in this workspace') });

    // Only the owner can publish the TXT record: the squatter cannot verify; the owner can.
    records.set(`_linkroute.${hostname}`, [claimed.body.data.verification.value]);
    const squatterTry = await call('POST', `/domains/${squatted.body.data.id}/verify`, undefined, squatter.key);
    expect(squatterTry.body.data).toMatchObject({ status: 'failed', failureReason: expect.stringContaining('none equals the expected value') });
    const verified = await call('POST', `/domains/${claimed.body.data.id}/verify`, undefined, owner.key);
    expect(verified.body.data).toMatchObject({ status: 'verified', failureReason: null });

    // The other claims turned failed, saying why (and not whose).
    const reason = `${hostname} was verified by another workspace`;
    for (const [tenant, domain] of [[squatter, squatted], [third, thirdClaim]] as const) {
      const listed = (await call('GET', '/domains', undefined, tenant.key)).body.data;
      expect(listed).toEqual([expect.objectContaining({ id: domain.body.data.id, status: 'failed', failureReason: reason, verifiedAt: null })]);
    }
    // Even with its own TXT record published too, a second workspace cannot take a verified hostname.
    records.set(`_linkroute.${hostname}`, [claimed.body.data.verification.value, thirdClaim.body.data.verification.value]);
    const late = await call('POST', `/domains/${thirdClaim.body.data.id}/verify`, undefined, third.key);
    expect(late.status).toBe(200);
    expect(late.body.data).toMatchObject({ status: 'failed', failureReason: reason, verifiedAt: null });
    // A verified hostname cannot be claimed by anyone else.
    const newcomer = await api.tenant();
    const refused = await call('POST', '/domains', { hostname: 'Links.Shared-Example.org.' }, newcomer.key);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', message: `Hostname ${hostname} is verified by another workspace` });
    expect((await call('GET', '/domains', undefined, newcomer.key)).body.data).toEqual([]);
    // The owner's re-verification keeps it.
    expect((await call('POST', `/domains/${claimed.body.data.id}/verify`, undefined, owner.key)).body.data.status).toBe('verified');

    // Tenancy: another workspace's claim is 404 to verify or delete, and not listed.
    expect((await call('POST', `/domains/${claimed.body.data.id}/verify`, undefined, squatter.key)).status).toBe(404);
    expect((await call('DELETE', `/domains/${claimed.body.data.id}`, undefined, squatter.key)).status).toBe(404);

    // Once the owner lets it go, a failed claim can verify and the hostname can be claimed again.
    await call('DELETE', `/domains/${claimed.body.data.id}`, undefined, owner.key);
    expect((await call('POST', `/domains/${thirdClaim.body.data.id}/verify`, undefined, third.key)).body.data).toMatchObject({ status: 'verified', failureReason: null });
    expect((await call('POST', '/domains', { hostname }, owner.key)).status).toBe(409);
    await call('DELETE', `/domains/${thirdClaim.body.data.id}`, undefined, third.key);
    expect((await call('POST', '/domains', { hostname }, newcomer.key)).status).toBe(201);
  });

  it('with two API instances verifying at once, exactly one workspace owns the hostname (Postgres decides)', async () => {
    const second = await listen(createApiApp({ sql: api.db.sql, config: loadApiConfig({ DNS_SERVERS: dns.address }), logger: createLogger('t', 'silent') }), 0, '127.0.0.1');
    try {
      for (let round = 0; round < 3; round++) {
        const hostname = `race-${round}.claims-example.net`;
        const tenants = await Promise.all(Array.from({ length: 6 }, () => api.tenant()));
        const claims = await Promise.all(tenants.map(async (t) => (await call('POST', '/domains', { hostname }, t.key)).body.data));
        // Every workspace's record is published: DNS alone cannot decide.
        records.set(`_linkroute.${hostname}`, claims.map((c) => c.verification.value));
        const results = await Promise.all(
          claims.map(async (claim, i) => {
            const res = await fetch(`${i % 2 === 0 ? server.url : second.url}/domains/${claim.id}/verify`, { method: 'POST', headers: { authorization: `Bearer ${tenants[i]!.key}` } });
            expect(res.status).toBe(200);
            return ((await res.json()) as any).data;
          }),
        );
        const owners = results.filter((d) => d.status === 'verified');
        expect(owners, `round ${round}`).toHaveLength(1);
        const stored = await api.db.sql<{ status: string; failureReason: string | null }[]>`
          SELECT status, failure_reason FROM domains WHERE hostname = ${hostname} AND deleted_at IS NULL ORDER BY status`;
        expect(stored.map((d) => d.status)).toEqual(['failed', 'failed', 'failed', 'failed', 'failed', 'verified']);
        expect(stored.filter((d) => d.status === 'failed').every((d) => d.failureReason === `${hostname} was verified by another workspace`)).toBe(true);
      }
    } finally {
      await second.close();
    }
  });

  it('a verification that did not find the record never fails a domain another verify just verified (two at once while DNS propagates)', async () => {
    const hostname = `race-${Date.now().toString(36)}.brand-example.com`;
    const domain = (await call('POST', '/domains', { hostname })).body.data;
    records.set(`_linkroute.${hostname}`, [domain.verification.value]);
    expect((await call('POST', `/domains/${domain.id}/verify`)).body.data.status).toBe('verified');
    // The slower verify's miss, read while the domain was pending, lands after the find.
    const store = domainStore(api.db.sql, 'http://go.test:8080');
    expect(await store.setFailed(domain.id, 'no TXT record found')).toBeUndefined();
    const listed = (await call('GET', '/domains?limit=100')).body.data.find((d: { id: string }) => d.id === domain.id);
    expect(listed).toMatchObject({ status: 'verified', failureReason: null });
  });

  it('refuses bad hostnames and bodies with the field named', async () => {
    for (const hostname of ['localhost', 'example', 'http://go.example.com', 'go.example.com:8080', '192.168.1.1', '-bad.example.com', 'sp ace.example.com', 'a'.repeat(64) + '.com', 'x.123', '', 42]) {
      const res = await call('POST', '/domains', { hostname });
      expect(res.status, String(hostname)).toBe(400);
      expect(res.body.error.details[0].path).toBe('hostname');
    }
    expect((await call('POST', '/domains', { hostname: 'ok.example.com', verified: true })).status).toBe(400);
    expect((await call('GET', '/domains?status=gone')).status).toBe(400);
    const readOnly = await api.tenant({ scopes: ['links:read'] });
    expect((await call('POST', '/domains', { hostname: 'ro.example.com' }, readOnly.key)).status).toBe(403);
  });

  // Last: its re-checks (every period 0) claim every verified domain of this file's database.
  it('re-checks verified domains: a missing TXT record makes a domain failing, after the grace failed (links gone, hostname free); checks are shared between instances and republish nothing', async () => {
    const hostname = 'recheck.brand-example.com';
    const registered = await call('POST', '/domains', { hostname });
    expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    const domain = registered.body.data;
    records.set(`_linkroute.${hostname}`, [domain.verification.value]);
    const verified = (await call('POST', `/domains/${domain.id}/verify`)).body.data;
    expect(verified).toMatchObject({ status: 'verified', checkedAt: expect.any(String), failingSince: null });
    const link = (await call('POST', '/links', { destinationUrl: 'https://brand.example/rc', domainId: domain.id, shortCode: 'recheck' })).body.data;
    expect(link?.id).toEqual(expect.any(String));
    const mine = async () => (await call('GET', '/domains?limit=100')).body.data.find((d: { id: string }) => d.id === domain.id);
    const queued = async () => (await api.db.sql<{ generation: string }[]>`SELECT generation FROM snapshot_outbox WHERE link_id = ${link.id}`)[0]?.generation;
    const silent = createLogger('t', 'silent');
    let published = 0;
    const rechecks = (graceMs: number) =>
      startDomainRechecks({
        sql: api.db.sql,
        config: loadApiConfig({ DNS_SERVERS: dns.address, DOMAIN_RECHECK_EVERY_MS: '0', DOMAIN_RECHECK_GRACE_MS: String(graceMs) }),
        logger: silent,
        onDomainFailed: async () => void published++,
      });
    // A port nothing listens on (freed at once).
    const closedPort = await freePort();
    const patient = rechecks(3_600_000);
    const strict = rechecks(0);
    try {
      // Found: checked again (by Postgres's clock, which stamps it), not failing, and its links are not queued again.
      const before = await queued();
      const now = (await api.db.sql<{ now: Date }[]>`SELECT now()`)[0]!.now;
      expect((await patient.runOnce()).checked).toBeGreaterThanOrEqual(1);
      expect(await mine()).toMatchObject({ status: 'verified', failingSince: null });
      expect(Date.parse((await mine()).checkedAt)).toBeGreaterThanOrEqual(Math.floor(now.getTime()));
      expect(await queued()).toBe(before);

      // Gone: failing, still verified within the grace, its link still resolving.
      records.delete(`_linkroute.${hostname}`);
      await patient.runOnce();
      const failing = await mine();
      expect(failing).toMatchObject({ status: 'verified', failingSince: expect.any(String) });
      expect((await loadCompiledLinks(api.db.sql, [link.id])).get(link.id)).toMatchObject({ domain: hostname });
      // Missing again: failing since the first miss. Failing queued none of its links again.
      await patient.runOnce();
      expect((await mine()).failingSince).toBe(failing.failingSince);
      expect(published).toBe(0);
      expect(await queued()).toBe(before);

      // The owner presses Verify while the record is missing: still verified, still failing (the grace holds).
      expect((await call('POST', `/domains/${domain.id}/verify`)).body.data).toMatchObject({ status: 'verified', failingSince: failing.failingSince });
      // A lookup that fails answers 503 and changes nothing.
      const blindApi = await listen(createApiApp({ sql: api.db.sql, config: loadApiConfig({ DNS_SERVERS: `127.0.0.1:${closedPort}` }), logger: silent }), 0, '127.0.0.1');
      try {
        const res = await fetch(`${blindApi.url}/domains/${domain.id}/verify`, { method: 'POST', headers: { authorization: `Bearer ${key}` } });
        expect(res.status).toBe(503);
        expect(((await res.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', message: expect.stringContaining('the domain stays verified') });
      } finally {
        await blindApi.close();
      }
      expect(await mine()).toMatchObject({ status: 'verified', failingSince: failing.failingSince });

      // A verify request between a re-check's claim and its result: the result is dropped.
      const store = domainStore(api.db.sql, 'http://go.test:8080');
      await api.db.sql`UPDATE domains SET checked_at = now() - interval '2 days' WHERE id = ${domain.id}`;
      const [claim] = (await store.claimRechecks(86_400_000, 100)).filter((d) => d.id === domain.id);
      records.set(`_linkroute.${hostname}`, [domain.verification.value]);
      expect((await call('POST', `/domains/${domain.id}/verify`)).body.data).toMatchObject({ status: 'verified', failingSince: null });
      expect(await store.missed(domain.id, 'gone', 0, claim!.claimed)).toBeUndefined();
      expect(await mine()).toMatchObject({ status: 'verified', failingSince: null });
      // Gone again: failing from the next re-check.
      records.delete(`_linkroute.${hostname}`);
      await patient.runOnce();
      const failingAgain = await mine();
      expect(failingAgain).toMatchObject({ status: 'verified', failingSince: expect.any(String) });

      // Past the grace: failed, saying why; its link stops resolving; another workspace may claim the hostname.
      const { checked, failed } = await strict.runOnce();
      expect(checked).toBeGreaterThanOrEqual(1);
      expect(failed).toBeGreaterThanOrEqual(1);
      expect(published).toBe(1);
      expect(await mine()).toMatchObject({ status: 'failed', failingSince: null, verifiedAt: null, failureReason: expect.stringContaining(`not found by the re-checks since ${failingAgain.failingSince.slice(0, 19)}Z`) });
      expect(await queued()).not.toBe(before);
      expect((await loadCompiledLinks(api.db.sql, [link.id])).get(link.id)).toBeNull();
      const other = await api.tenant();
      expect((await call('POST', '/domains', { hostname }, other.key)).status).toBe(201);

      // The record back: the owner verifies again, and a re-check finds it.
      records.set(`_linkroute.${hostname}`, [domain.verification.value]);
      expect((await call('POST', `/domains/${domain.id}/verify`)).body.data).toMatchObject({ status: 'verified', failingSince: null });
      await strict.runOnce();
      expect(await mine()).toMatchObject({ status: 'verified', failingSince: null });

      // A lookup that fails (no DNS server where asked) tells nothing of the record: not failing, even with no grace.
      const blind = startDomainRechecks({
        sql: api.db.sql,
        config: loadApiConfig({ DNS_SERVERS: `127.0.0.1:${closedPort}`, DOMAIN_RECHECK_EVERY_MS: '0', DOMAIN_RECHECK_GRACE_MS: '0' }),
        logger: silent,
        onDomainFailed: async () => void published++,
      });
      try {
        expect((await blind.runOnce()).failed).toBe(0);
      } finally {
        await blind.stop();
      }
      expect(await mine()).toMatchObject({ status: 'verified', failingSince: null });

      // A day's period: two instances at once check the domain once between them.
      await api.db.sql`UPDATE domains SET checked_at = now() - interval '2 days' WHERE id = ${domain.id}`;
      const daily = () =>
        startDomainRechecks({ sql: api.db.sql, config: loadApiConfig({ DNS_SERVERS: dns.address }), logger: silent, onDomainFailed: async () => undefined });
      const [a, b] = [daily(), daily()];
      try {
        const passes = await Promise.all([a.runOnce(), b.runOnce()]);
        expect(passes[0]!.checked + passes[1]!.checked).toBe(1);
        expect((await a.runOnce()).checked).toBe(0);
      } finally {
        await a.stop();
        await b.stop();
      }
    } finally {
      await patient.stop();
      await strict.stop();
    }
  });
});
