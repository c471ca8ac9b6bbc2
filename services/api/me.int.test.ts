import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../shared/testing/test-database.ts';
import { createApiKey, createWorkspace, revokeApiKey } from '../../shared/db/workspaces.ts';
import { meSchema } from '../../shared/schemas/me.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';

describe.each(backends)('GET /me on %s', (backend) => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(backend);
  });
  afterAll(() => api?.close());

  it("answers the key's workspace and its own scopes, whatever they are", async () => {
    const workspace = await createWorkspace(api.db.sql, { name: 'Acme Analytics', plan: 'pro' });
    const issued = await createApiKey(api.db.sql, { workspaceId: workspace.id, name: 'dashboard', scopes: ['links:read'] });
    const res = await api.request('GET', '/me', { key: issued.key });
    expect(res.status).toBe(200);
    expect(meSchema.parse(res.body.data)).toEqual({
      workspace: { id: workspace.id, name: 'Acme Analytics', plan: 'pro' },
      key: { id: issued.id, name: 'dashboard', prefix: issued.prefix, scopes: ['links:read'], createdAt: expect.any(String) },
    });
    expect(res.body.data.key.prefix).toBe(issued.key.slice(0, issued.prefix.length));
    // Counted like any request: the rate-limit headers are there.
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
  });

  it('401 without a key, with an unknown one, with a revoked one', async () => {
    const { workspaceId } = await api.tenant();
    const issued = await createApiKey(api.db.sql, { workspaceId });
    await revokeApiKey(api.db.sql, issued.id);
    for (const key of [null, 'lr_live_unknownunknownunknownunknown12', issued.key]) {
      const res = await api.request('GET', '/me', { key });
      expect(res.status).toBe(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    }
  });

  it('405 for other methods', async () => {
    const { key } = await api.tenant();
    const res = await api.request('POST', '/me', { key, body: {} });
    expect(res.status).toBe(405);
    expect(res.body.error.code).toBe('METHOD_NOT_ALLOWED');
  });
});
