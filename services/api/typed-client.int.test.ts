import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLinkrouteClient, type LinkrouteClient } from '../../shared/client/client.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';

/**
 * The typed client (shared/client/) against the running API: what its generated types
 * let a program send is what the API takes, arrays of list parameters included.
 */
describe('the typed API client against the API', () => {
  let api: TestApi;
  let client: LinkrouteClient;

  beforeAll(async () => {
    api = await startTestApi('postgres');
    const { key } = await api.tenant();
    client = createLinkrouteClient({ baseUrl: api.url, apiKey: () => key });
  }, 60_000);
  afterAll(async () => {
    await api?.close();
  });

  it('creates, filters by a tag array (sent as repeated parameters: any of them), patches and reads back', async () => {
    const made = await client.POST('/links/bulk', {
      body: { links: [{ destinationUrl: 'https://example.com/a', tags: ['spring'] }, { destinationUrl: 'https://example.com/b', tags: ['summer'] }, { destinationUrl: 'https://example.com/c', tags: ['autumn'] }] },
    });
    expect(made.response.status).toBe(200);
    const ids = made.data!.data.map((item) => (item.success ? item.data.id : ''));

    const both = await client.GET('/links', { params: { query: { tag: ['spring', 'summer'] } } });
    expect(new URL(both.response.url).search).toBe('?tag=spring&tag=summer');
    expect(both.data!.data.map((l) => l.id).sort()).toEqual([ids[0], ids[1]].sort());
    const one = await client.GET('/links', { params: { query: { tag: 'autumn' } } });
    expect(one.data!.data.map((l) => l.id)).toEqual([ids[2]]);

    const patched = await client.PATCH('/links/{id}', { params: { path: { id: ids[0]! } }, body: { title: 'Spring' } });
    expect(patched.data!.data.title).toBe('Spring');
    const missing = await client.GET('/links/{id}', { params: { path: { id: 'link_missing' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error!.error.code).toBe('NOT_FOUND');
  });
});
