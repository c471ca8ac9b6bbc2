import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/logger.ts';
import { createApiApp } from './app.ts';
import { loadApiConfig } from './config.ts';
import { listen, type RunningServer } from './server.ts';
import { loadCompiledLinks } from './snapshot/load-compiled-links.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';
import { startDnsServer, type DnsServer } from '../../shared/testing/dns-server.ts';

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

  it('a hostname is taken across workspaces (409), free again once deleted; lists and tenancy', async () => {
    const other = await api.tenant();
    const mine = await call('POST', '/domains', { hostname: 'links.shared-example.org' });
    expect(mine.status).toBe(201);
    const theirs = await call('POST', '/domains', { hostname: 'LINKS.shared-example.org' }, other.key);
    expect(theirs.status).toBe(409);
    expect(theirs.body.error.code).toBe('CONFLICT');
    expect((await call('POST', `/domains/${mine.body.data.id}/verify`, undefined, other.key)).status).toBe(404);
    expect((await call('DELETE', `/domains/${mine.body.data.id}`, undefined, other.key)).status).toBe(404);
    expect((await call('GET', '/domains', undefined, other.key)).body.data).toEqual([]);
    await call('DELETE', `/domains/${mine.body.data.id}`);
    expect((await call('POST', '/domains', { hostname: 'links.shared-example.org' }, other.key)).status).toBe(201);
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
});
