import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../shared/testing/test-database.ts';
import { campaignSchema } from '../../shared/schemas/campaign.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';

describe.each(backends)('campaigns API on %s', (backend) => {
  let api: TestApi;
  let key: string;

  beforeAll(async () => {
    api = await startTestApi(backend);
    ({ key } = await api.tenant());
  });
  afterAll(() => api?.close());

  it('every workspace starts with one default campaign', async () => {
    const res = await api.request('GET', '/campaigns', { key });
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(campaignSchema.strict().parse(res.body.data[0])).toMatchObject({ name: 'Default', status: 'active', isDefault: true });
  });

  it('creates with defaults (201) and reads it back', async () => {
    const res = await api.request('POST', '/campaigns', { key, body: { name: '  Launch  ' } });
    expect(res.status).toBe(201);
    const campaign = campaignSchema.strict().parse(res.body.data);
    expect(campaign).toMatchObject({ name: 'Launch', description: '', status: 'active', isDefault: false });
    expect(campaign.id).toMatch(/^campaign_/);
    const got = await api.request('GET', `/campaigns/${campaign.id}`, { key });
    expect(got.body).toEqual({ success: true, data: campaign });
  });

  it('updates name, description and status, and sets updatedAt', async () => {
    const { body } = await api.request('POST', '/campaigns', { key, body: { name: 'Old', description: 'd', status: 'paused' } });
    expect(body.data.status).toBe('paused');
    await new Promise((r) => setTimeout(r, 5));
    const res = await api.request('PATCH', `/campaigns/${body.data.id}`, { key, body: { name: 'New', status: 'archived' } });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: body.data.id, name: 'New', description: 'd', status: 'archived', createdAt: body.data.createdAt });
    expect(Date.parse(res.body.data.updatedAt)).toBeGreaterThan(Date.parse(body.data.updatedAt));
  });

  it('paginates newest first and filters by status', async () => {
    const tenant = await api.tenant();
    const ids: string[] = [];
    for (const status of ['active', 'paused', 'active']) {
      ids.push((await api.request('POST', '/campaigns', { key: tenant.key, body: { name: `C ${status}`, status } })).body.data.id);
    }
    const page = await api.request('GET', '/campaigns?limit=2', { key: tenant.key });
    expect(page.body.pagination).toEqual({ page: 1, limit: 2, total: 4, totalPages: 2 });
    expect(page.body.data.map((c: { id: string }) => c.id)).toEqual([ids[2], ids[1]]);
    const paused = await api.request('GET', '/campaigns?status=paused', { key: tenant.key });
    expect(paused.body.data.map((c: { id: string }) => c.id)).toEqual([ids[1]]);
  });

  it('answers 404 for unknown campaigns and for another workspace\'s', async () => {
    const other = await api.tenant();
    const { body } = await api.request('POST', '/campaigns', { key: other.key, body: { name: 'Theirs' } });
    for (const id of ['campaign_nope', body.data.id]) {
      const get = await api.request('GET', `/campaigns/${id}`, { key });
      expect(get.status).toBe(404);
      expect(get.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: 'Campaign not found' } });
      expect((await api.request('PATCH', `/campaigns/${id}`, { key, body: { name: 'Mine now' } })).status).toBe(404);
    }
    expect((await api.request('GET', `/campaigns/${body.data.id}`, { key: other.key })).body.data.name).toBe('Theirs');
  });

  it('rejects bad bodies and queries with details', async () => {
    const cases: Array<[string, string, unknown, string[]]> = [
      ['POST', '/campaigns', {}, ['name']],
      ['POST', '/campaigns', { name: '   ' }, ['name']],
      ['POST', '/campaigns', { name: 'x', status: 'deleted' }, ['status']],
      ['POST', '/campaigns', { name: 'x', budget: 5 }, ['budget']],
      ['POST', '/campaigns', { name: 'x'.repeat(201) }, ['name']],
      ['POST', '/campaigns', { name: 42 }, ['name']],
    ];
    for (const [method, path, body, paths] of cases) {
      const res = await api.request(method, path, { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual(paths);
    }
    const { body } = await api.request('POST', '/campaigns', { key, body: { name: 'x' } });
    const empty = await api.request('PATCH', `/campaigns/${body.data.id}`, { key, body: {} });
    expect(empty.status).toBe(400);
    expect((await api.request('PATCH', `/campaigns/${body.data.id}`, { key, body: { isDefault: true } })).status).toBe(400);
    expect((await api.request('GET', '/campaigns?status=gone', { key })).status).toBe(400);
    expect((await api.request('GET', '/campaigns?limit=0', { key })).status).toBe(400);
  });
});
