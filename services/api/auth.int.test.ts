import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../shared/testing/test-database.ts';
import { createApiKey, findPrincipalByHash, revokeApiKey } from '../../shared/db/workspaces.ts';
import { keyCache } from './middleware/key-cache.ts';
import { scopes, type Scope } from '../../shared/schemas/common.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';

/** Every authenticated route and the scope it needs. */
const routes: Array<{ method: string; path: string; scope: Scope; body?: unknown }> = [
  { method: 'GET', path: '/links', scope: 'links:read' },
  { method: 'POST', path: '/links', scope: 'links:write', body: { destinationUrl: 'https://example.com' } },
  { method: 'GET', path: '/links/link_x', scope: 'links:read' },
  { method: 'PATCH', path: '/links/link_x', scope: 'links:write', body: { title: 't' } },
  { method: 'DELETE', path: '/links/link_x', scope: 'links:write' },
  { method: 'GET', path: '/campaigns', scope: 'links:read' },
  { method: 'POST', path: '/campaigns', scope: 'campaigns:write', body: { name: 'c' } },
  { method: 'GET', path: '/campaigns/campaign_x', scope: 'links:read' },
  { method: 'PATCH', path: '/campaigns/campaign_x', scope: 'campaigns:write', body: { name: 'c' } },
  { method: 'GET', path: '/rules', scope: 'links:read' },
  { method: 'GET', path: '/rules/rule_x', scope: 'links:read' },
  { method: 'POST', path: '/rules', scope: 'rules:write', body: { campaignId: 'campaign_x', type: 'percentage', conditions: { percentage: 5 }, destinationUrl: 'https://e.com' } },
  { method: 'PATCH', path: '/rules/rule_x', scope: 'rules:write', body: { priority: 5 } },
  { method: 'DELETE', path: '/rules/rule_x', scope: 'rules:write' },
];

describe.each(backends)('authentication and tenancy on %s', (backend) => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startTestApi(backend);
  });
  afterAll(() => api?.close());

  it('401 UNAUTHORIZED without a key, with a malformed header, with an unknown key', async () => {
    const headers = [undefined, 'Bearer', 'Basic dXNlcjpwYXNz', 'Bearer lr_live_unknownunknownunknownunknown12', 'Bearer not-a-key', 'lr_live_abc'];
    for (const route of routes) {
      for (const authorization of headers) {
        const res = await api.request(route.method, route.path, { body: route.body, ...(authorization ? { headers: { authorization } } : {}) });
        expect(res.status, `${route.method} ${route.path} ${authorization}`).toBe(401);
        expect(res.body.success).toBe(false);
        expect(res.body.error.code).toBe('UNAUTHORIZED');
      }
    }
  });

  it('401 before any body validation', async () => {
    const res = await api.request('POST', '/links', { rawBody: '{not json', headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(401);
  });

  it('403 FORBIDDEN for a key lacking the route scope; allowed with it (scope matrix)', async () => {
    const { workspaceId } = await api.tenant();
    for (const scope of scopes) {
      const { key } = await createApiKey(api.db.sql, { workspaceId, scopes: scopes.filter((s) => s !== scope) });
      const { key: only } = await createApiKey(api.db.sql, { workspaceId, scopes: [scope] });
      for (const route of routes.filter((r) => r.scope === scope)) {
        const denied = await api.request(route.method, route.path, { key, body: route.body });
        expect(denied.status, `${route.method} ${route.path} without ${scope}`).toBe(403);
        expect(denied.body.error).toEqual({ code: 'FORBIDDEN', message: `This API key lacks the ${scope} scope` });
        const allowed = await api.request(route.method, route.path, { key: only, body: route.body });
        // Past auth: the route answers on its merits (x ids are unknown, so 404, or 400 for a body naming one).
        expect([200, 201, 400, 404], `${route.method} ${route.path} with ${scope}`).toContain(allowed.status);
        expect(allowed.body.error?.code ?? 'none').not.toMatch(/UNAUTHORIZED|FORBIDDEN/);
      }
    }
  });

  it('a revoked key is refused at most API_KEY_CACHE_MS after its revocation (at once with API_KEY_CACHE_MS=0)', async () => {
    // An instance whose clock the test moves.
    let clock = 1_000_000_000;
    const other = await startTestApi(backend, { now: () => clock, env: { API_KEY_CACHE_MS: '60000' } });
    try {
      const { workspaceId } = await other.tenant();
      const issued = await createApiKey(other.db.sql, { workspaceId });
      expect((await other.request('GET', '/links', { key: issued.key })).status).toBe(200); // looked up at `clock`
      await revokeApiKey(other.db.sql, issued.id);
      // Within the bound the kept lookup still admits it (the documented staleness)...
      clock += 59_999;
      expect((await other.request('GET', '/links', { key: issued.key })).status).toBe(200);
      // ...and from the bound on it is refused, and never kept again.
      clock += 1;
      expect((await other.request('GET', '/links', { key: issued.key })).status).toBe(401);
      expect((await other.request('GET', '/links', { key: issued.key })).status).toBe(401);
    } finally {
      await other.close();
    }
    // With API_KEY_CACHE_MS=0 every request looks its key up: refused at once.
    const uncached = await startTestApi(backend, { env: { API_KEY_CACHE_MS: '0' } });
    try {
      const { workspaceId } = await uncached.tenant();
      const issued = await createApiKey(uncached.db.sql, { workspaceId });
      expect((await uncached.request('GET', '/links', { key: issued.key })).status).toBe(200);
      await revokeApiKey(uncached.db.sql, issued.id);
      expect((await uncached.request('GET', '/links', { key: issued.key })).status).toBe(401);
    } finally {
      await uncached.close();
    }
  });

  it('a plan change applies on an instance at most API_KEY_CACHE_MS after it', async () => {
    let clock = 1_000_000_000;
    const other = await startTestApi(backend, { now: () => clock, env: { API_KEY_CACHE_MS: '1000' } });
    try {
      const { workspaceId, key } = await other.tenant({ plan: 'pro' });
      expect((await other.request('GET', '/links', { key })).headers.get('x-ratelimit-limit')).toBe('1000');
      await other.db.sql`UPDATE workspaces SET plan = 'enterprise' WHERE id = ${workspaceId}`;
      clock += 999;
      expect((await other.request('GET', '/links', { key })).headers.get('x-ratelimit-limit')).toBe('1000');
      clock += 1;
      expect((await other.request('GET', '/links', { key })).headers.get('x-ratelimit-limit')).toBe('10000');
    } finally {
      await other.close();
    }
  });

  it('concurrent requests with a key not kept share one lookup; unknown keys are never kept', async () => {
    const { key } = await api.tenant();
    let lookups = 0;
    const keys = keyCache(
      (keyHash) => {
        lookups++;
        return findPrincipalByHash(api.db.sql, keyHash);
      },
      { ttlMs: 1_000, now: () => 0 },
    );
    const principals = await Promise.all(Array.from({ length: 8 }, () => keys.principal(key)));
    expect(lookups).toBe(1);
    expect(new Set(principals).size).toBe(1);
    expect(principals[0]).not.toBeNull();
    expect(await keys.principal(key)).toBe(principals[0]);
    expect(lookups).toBe(1);
    const unknown = 'lr_live_unknownunknownunknownunknown12';
    expect(await keys.principal(unknown)).toBeNull();
    expect(await keys.principal(unknown)).toBeNull();
    expect(lookups).toBe(3);
  });

  it('keys are stored only as hashes', async () => {
    const { workspaceId, key } = await api.tenant();
    const rows = await api.db.sql`SELECT key_hash, key_prefix FROM api_keys WHERE workspace_id = ${workspaceId}`;
    expect(rows).toHaveLength(1);
    expect(rows[0]!.keyHash).not.toContain(key.slice(8));
    expect(key.startsWith(rows[0]!.keyPrefix)).toBe(true);
    expect(rows[0]!.keyPrefix.length).toBeLessThan(key.length / 2);
  });

  it('another workspace\'s links answer 404 to every operation and never appear in lists', async () => {
    const a = await api.tenant();
    const b = await api.tenant();
    const { body } = await api.request('POST', '/links', { key: a.key, body: { destinationUrl: 'https://a.example', shortCode: 'tenant-a-only' } });
    const id = body.data.id;
    for (const path of [`/links/${id}`, '/links/tenant-a-only', `/links/${id}?include=rules`]) {
      const res = await api.request('GET', path, { key: b.key });
      expect(res.status, path).toBe(404);
      expect(res.body.error).toEqual({ code: 'NOT_FOUND', message: 'Link not found' });
    }
    expect((await api.request('PATCH', `/links/${id}`, { key: b.key, body: { title: 'pwned' } })).status).toBe(404);
    expect((await api.request('DELETE', `/links/${id}`, { key: b.key })).status).toBe(404);
    expect((await api.request('GET', '/links?q=tenant-a', { key: b.key })).body.data).toEqual([]);
    const still = await api.request('GET', `/links/${id}`, { key: a.key });
    expect(still.body.data).toMatchObject({ title: '', enabled: true });
  });

  it('/health and /ready need no key; /metrics is not on the API port (ADMIN_PORT has it)', async () => {
    expect((await api.request('GET', '/health')).body).toEqual({ success: true, data: { status: 'ok' } });
    expect((await api.request('GET', '/ready')).body).toEqual({ success: true, data: { status: 'ready', checks: { postgres: 'ok' } } });
    expect((await api.request('GET', '/metrics')).status).toBe(404);
  });
});
