import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/logger.ts';
import { createApiApp } from './app.ts';
import { loadApiConfig } from './config.ts';
import { listen, type RunningServer } from './server.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';
import { startDnsServer, type DnsServer } from '../../shared/testing/dns-server.ts';
import { whileLocked } from './testing/while-locked.ts';

/** /links/{shortCode}?domain= / ?domainId= (GET, PATCH, DELETE): a short code is unique per domain, so the domain names the link. */
describe('GET /links/{shortCode} on a custom domain', () => {
  let api: TestApi;
  let server: RunningServer;
  let dns: DnsServer;
  const records = new Map<string, string[]>();
  let key: string;
  let otherKey: string;
  let domainId: string;
  let onDomain: string;
  let onDefault: string;

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
    server = await listen(createApiApp({ sql: api.db.sql, config: loadApiConfig({ DNS_SERVERS: dns.address }), logger: createLogger('t', 'silent') }), 0, '127.0.0.1');
    ({ key } = await api.tenant());
    ({ key: otherKey } = await api.tenant());
    const hostname = `go-${Date.now().toString(36)}.lookup-example.com`;
    const domain = (await call('POST', '/domains', { hostname })).body.data;
    records.set(`_linkroute.${hostname}`, [domain.verification.value]);
    expect((await call('POST', `/domains/${domain.id}/verify`)).body.data.status).toBe('verified');
    domainId = domain.id;
    onDomain = (await call('POST', '/links', { destinationUrl: 'https://brand.example/custom', domainId, shortCode: 'promo' })).body.data.id;
    onDefault = (await call('POST', '/links', { destinationUrl: 'https://brand.example/default', shortCode: 'promo' })).body.data.id;
  });
  afterAll(async () => {
    await server?.close();
    await api?.close();
    dns?.close();
  });

  it('finds the link by its custom domain (hostname in any case, or id); without one, the default domain', async () => {
    const hostname = (await call('GET', `/links/${onDomain}`)).body.data.redirectDomain as string;
    for (const query of [`domain=${hostname}`, `domain=${hostname.toUpperCase()}`, `domain=${hostname}.`, `domainId=${domainId}`]) {
      const res = await call('GET', `/links/promo?${query}`);
      expect(res.status, query).toBe(200);
      expect(res.body.data, query).toMatchObject({ id: onDomain, domainId, destinationUrl: 'https://brand.example/custom' });
    }
    expect((await call('GET', '/links/promo')).body.data.id).toBe(onDefault);
    expect((await call('GET', `/links/promo?domain=${hostname}&include=rules`)).body.data).toMatchObject({ id: onDomain, rules: [] });
    // With a link id, the domain must be the link's.
    expect((await call('GET', `/links/${onDomain}?domainId=${domainId}`)).status).toBe(200);
    expect((await call('GET', `/links/${onDefault}?domainId=${domainId}`)).status).toBe(404);
    expect((await call('GET', `/links/${onDefault}?domain=${hostname}`)).status).toBe(404);
  });

  it('a hostname deleted and added again: the new domain\'s link answers by hostname, the old one by its id and old domainId', async () => {
    const hostname = `again-${Date.now().toString(36)}.lookup-example.com`;
    const addDomain = async () => {
      const domain = (await call('POST', '/domains', { hostname })).body.data;
      records.set(`_linkroute.${hostname}`, [domain.verification.value]);
      expect((await call('POST', `/domains/${domain.id}/verify`)).body.data.status).toBe('verified');
      return domain.id as string;
    };
    const first = await addDomain();
    const old = (await call('POST', '/links', { destinationUrl: 'https://brand.example/old', domainId: first, shortCode: 'again' })).body.data.id;
    expect((await call('DELETE', `/domains/${first}`)).status).toBe(200);
    // While the workspace has no live domain of the hostname, the deleted domain's link is still found by hostname.
    expect((await call('GET', `/links/again?domain=${hostname}`)).body.data.id).toBe(old);
    const second = await addDomain();
    const renewed = await call('POST', '/links', { destinationUrl: 'https://brand.example/new', domainId: second, shortCode: 'again' });
    expect(renewed.status).toBe(201);
    expect((await call('GET', `/links/again?domain=${hostname}`)).body.data).toMatchObject({ id: renewed.body.data.id, domainId: second, destinationUrl: 'https://brand.example/new' });
    expect((await call('GET', `/links/again?domainId=${second}`)).body.data.id).toBe(renewed.body.data.id);
    expect((await call('GET', `/links/again?domainId=${first}`)).body.data.id).toBe(old);
    expect((await call('GET', `/links/${old}`)).body.data).toMatchObject({ domainId: first, destinationUrl: 'https://brand.example/old' });
  });

  it("a hostname added again owns its codes by hostname: its deleted link is 410 and 404 by code, never the deleted domain's live link", async () => {
    const hostname = `readd-${Date.now().toString(36)}.lookup-example.com`;
    const addDomain = async () => {
      const domain = (await call('POST', '/domains', { hostname })).body.data;
      records.set(`_linkroute.${hostname}`, [domain.verification.value]);
      expect((await call('POST', `/domains/${domain.id}/verify`)).body.data.status).toBe('verified');
      return domain.id as string;
    };
    const first = await addDomain();
    const old = (await call('POST', '/links', { destinationUrl: 'https://brand.example/old-sale', domainId: first, shortCode: 'sale' })).body.data.id;
    expect((await call('DELETE', `/domains/${first}`)).status).toBe(200);
    const second = await addDomain();
    // Added again, the code not taken there yet: the hostname names the new domain, which has no such link.
    expect((await call('GET', `/links/sale?domain=${hostname}`)).status).toBe(404);
    expect((await call('PATCH', `/links/sale?domain=${hostname}`, { title: 'x' })).status).toBe(404);
    expect((await call('DELETE', `/links/sale?domain=${hostname}`)).status).toBe(404);
    const renewed = (await call('POST', '/links', { destinationUrl: 'https://brand.example/new-sale', domainId: second, shortCode: 'sale' })).body.data.id;
    expect((await call('DELETE', `/links/sale?domain=${hostname}`)).body.data).toEqual({ id: renewed, deleted: true });
    const again = await call('DELETE', `/links/sale?domain=${hostname}`);
    expect(again.status).toBe(410);
    expect(again.body.error.code).toBe('ALREADY_DELETED');
    expect((await call('GET', `/links/sale?domain=${hostname}`)).status).toBe(404);
    expect((await call('PATCH', `/links/sale?domain=${hostname}`, { title: 'x' })).status).toBe(404);
    // The old domain's link is untouched, readable by its id and its domainId.
    const kept = (await call('GET', `/links/${old}`)).body.data;
    expect(kept).toMatchObject({ id: old, domainId: first, destinationUrl: 'https://brand.example/old-sale', title: '' });
    expect(kept.deletedAt ?? null).toBeNull();
    expect((await call('GET', `/links/sale?domainId=${first}`)).body.data.id).toBe(old);
    // The new domain deleted too: the hostname has no live domain, and the old live link answers again.
    expect((await call('DELETE', `/domains/${second}`)).status).toBe(200);
    expect((await call('GET', `/links/sale?domain=${hostname}`)).body.data.id).toBe(old);
  });

  it('PATCH and DELETE by short code take the domain too: a change meant on the custom domain never lands on the default domain\'s link; a second delete by code is 410', async () => {
    const hostname = (await call('GET', `/links/${onDomain}`)).body.data.redirectDomain as string;
    const branded = (await call('POST', '/links', { destinationUrl: 'https://brand.example/branded', domainId, shortCode: 'twin' })).body.data.id;
    const plain = (await call('POST', '/links', { destinationUrl: 'https://brand.example/plain', shortCode: 'twin' })).body.data.id;
    const patched = await call('PATCH', `/links/twin?domain=${hostname}`, { title: 'Branded twin' });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({ id: branded, title: 'Branded twin' });
    expect((await call('PATCH', `/links/twin?domainId=${domainId}`, { title: 'By domain id' })).body.data).toMatchObject({ id: branded, title: 'By domain id' });
    expect((await call('GET', `/links/${plain}`)).body.data.title).toBe('');
    // With a link id, the domain must be the link's, as for GET.
    expect((await call('PATCH', `/links/${plain}?domainId=${domainId}`, { title: 'x' })).status).toBe(404);

    const deleted = await call('DELETE', `/links/twin?domain=${hostname}`);
    expect(deleted).toEqual({ status: 200, body: { success: true, data: { id: branded, deleted: true } } });
    expect((await call('GET', `/links/${plain}`)).status).toBe(200);
    const again = await call('DELETE', `/links/twin?domain=${hostname}`);
    expect(again.status).toBe(410);
    expect(again.body.error.code).toBe('ALREADY_DELETED');
    // The default domain's link, by code, twice.
    expect((await call('DELETE', '/links/twin')).body.data).toEqual({ id: plain, deleted: true });
    expect((await call('DELETE', '/links/twin')).status).toBe(410);
    expect((await call('DELETE', '/links/never-was')).status).toBe(404);
    expect((await call('PATCH', '/links/twin', { title: 'x' })).status).toBe(404);
  });

  it('a link created while its domain is being deleted waits for the deletion, then is refused: none is published on a domain that stopped serving', async () => {
    const hostname = `going-${Date.now().toString(36)}.lookup-example.com`;
    const domain = (await call('POST', '/domains', { hostname })).body.data;
    records.set(`_linkroute.${hostname}`, [domain.verification.value]);
    expect((await call('POST', `/domains/${domain.id}/verify`)).body.data.status).toBe('verified');
    // The deletion (as DELETE /domains does it) is under way when the create runs.
    const creating = await whileLocked(
      api.db,
      (tx) => tx`UPDATE domains SET deleted_at = now() WHERE id = ${domain.id}`,
      () => call('POST', '/links', { destinationUrl: 'https://brand.example/late', domainId: domain.id, shortCode: 'late' }),
      1,
    );
    const refused = await creating;
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([{ path: 'domainId', message: `domain ${domain.id} is no longer verified` }]);
    expect((await api.db.sql`SELECT id FROM links WHERE domain_id = ${domain.id}`).length).toBe(0);
    // Beside it in a bulk, a default-domain link goes in.
    const other = (await call('POST', '/domains', { hostname: `other-${hostname}` })).body.data;
    records.set(`_linkroute.other-${hostname}`, [other.verification.value]);
    expect((await call('POST', `/domains/${other.id}/verify`)).body.data.status).toBe('verified');
    const bulk = await whileLocked(
      api.db,
      (tx) => tx`UPDATE domains SET status = 'failed' WHERE id = ${other.id}`,
      () => call('POST', '/links/bulk', { links: [{ destinationUrl: 'https://brand.example/a', domainId: other.id }, { destinationUrl: 'https://brand.example/b' }] }),
      1,
    );
    const items = (await bulk).body.data;
    expect(items.map((i: { success: boolean }) => i.success)).toEqual([false, true]);
    expect(items[0].error.details[0].path).toBe('domainId');
  });

  it('another domain, an unknown one, or another workspace: 404 NOT_FOUND', async () => {
    const hostname = (await call('GET', `/links/${onDomain}`)).body.data.redirectDomain as string;
    for (const [query, k] of [
      ['domain=unknown-host.example.com', key],
      ['domainId=domain_doesnotexist', key],
      [`domain=${hostname}`, otherKey],
      [`domainId=${domainId}`, otherKey],
    ] as const) {
      const res = await call('GET', `/links/promo?${query}`, undefined, k);
      expect(res.status, query).toBe(404);
      expect(res.body.error, query).toEqual({ code: 'NOT_FOUND', message: 'Link not found' });
    }
  });

  it('bad input: 400 VALIDATION_ERROR naming the parameter', async () => {
    for (const [query, path] of [
      ['domain=', 'domain'],
      ['domain=http://go.example.com', 'domain'],
      ['domain=go.example.com:443', 'domain'],
      ['domain=127.0.0.1', 'domain'],
      ['domain=localhost', 'domain'],
      [`domain=${'a'.repeat(300)}.com`, 'domain'],
      ['domainId=', 'domainId'],
      ['domainId=link_abc', 'domainId'],
      [`domainId=${domainId}&domain=go.example.com`, 'domainId'],
      ['domain=a.example.com&domain=b.example.com', 'domain'],
    ] as const) {
      for (const [method, body] of [['GET'], ['PATCH', { title: 'x' }], ['DELETE']] as const) {
        const res = await call(method, `/links/promo?${query}`, body);
        expect(res.status, `${method} ${query}`).toBe(400);
        expect(res.body.error.code, `${method} ${query}`).toBe('VALIDATION_ERROR');
        expect(res.body.error.details.map((d: { path: string }) => d.path), `${method} ${query}`).toContain(path);
      }
    }
    // A write takes no other parameter: a typo is refused, not ignored.
    for (const method of ['PATCH', 'DELETE'] as const) {
      const res = await call(method, '/links/promo?domian=go.example.com', method === 'PATCH' ? { title: 'x' } : undefined);
      expect(res.status, method).toBe(400);
      expect(res.body.error.code, method).toBe('VALIDATION_ERROR');
    }
    expect((await call('GET', `/links/${onDefault}`)).body.data.title).toBe('');
  });
});
