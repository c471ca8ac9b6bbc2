import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../shared/testing/test-database.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';

/** GET /links?startingAfter=<id>: a walk of the list that links created meanwhile cannot shift. */
describe.each(backends)('walking GET /links by startingAfter on %s', (backend) => {
  let api: TestApi;
  let key: string;

  beforeAll(async () => {
    api = await startTestApi(backend);
    ({ key } = await api.tenant());
  });
  afterAll(() => api?.close());

  const create = async (n: number, k = key) => {
    const res = await api.request('POST', '/links/bulk', { key: k, body: { links: Array.from({ length: n }, (_, i) => ({ destinationUrl: `https://example.com/${i}` })) } });
    expect(res.status).toBe(200);
    return (res.body.data as Array<{ data: { id: string } }>).map((item) => item.data.id);
  };
  const page = (query: string, k = key) => api.request('GET', `/links?limit=10&${query}`, { key: k });

  it('sees every link once while links are created between pages, where page numbers would repeat them', async () => {
    const before = await create(25);
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let walked = 0; walked < 10; walked++) {
      const res = await page(cursor ? `startingAfter=${cursor}` : '');
      expect(res.status).toBe(200);
      const ids = (res.body.data as Array<{ id: string }>).map((l) => l.id);
      if (ids.length === 0) break;
      seen.push(...ids);
      cursor = ids.at(-1);
      await create(3); // newer than every link walked: they come before the cursor
    }
    expect(seen.sort()).toEqual([...before].sort());
    // The same walk by page numbers meets the links made meanwhile again (shifted down a page).
    const first = (await page('page=1')).body.data.map((l: { id: string }) => l.id);
    await create(3);
    const second = (await page('page=2')).body.data.map((l: { id: string }) => l.id);
    expect(second.filter((id: string) => first.includes(id))).toHaveLength(3);
  });

  it('keeps total as every matching link, walks on past a deleted cursor, and refuses a cursor it does not know', async () => {
    const { key: own } = await api.tenant();
    const ids = await create(12, own);
    const first = await page('', own);
    expect(first.body.pagination).toMatchObject({ total: 12 });
    const cursor = first.body.data.at(-1).id as string;
    expect((await api.request('DELETE', `/links/${cursor}`, { key: own })).status).toBe(200);
    const rest = await page(`startingAfter=${cursor}`, own);
    expect(rest.status).toBe(200);
    expect(rest.body.data.map((l: { id: string }) => l.id).sort()).toEqual(ids.filter((id) => !first.body.data.some((l: { id: string }) => l.id === id)).sort());
    expect(rest.body.pagination).toMatchObject({ total: 11 });

    const { key: other } = await api.tenant();
    const otherId = (await create(1, other))[0]!;
    for (const query of [`startingAfter=${otherId}`, 'startingAfter=link_nope']) {
      const res = await page(query, own);
      expect(res.status, query).toBe(400);
      expect(res.body.error.details).toEqual([{ path: 'startingAfter', message: 'no link of this workspace has this id' }]);
    }
    const both = await page(`startingAfter=${cursor}&page=2`, own);
    expect(both.status).toBe(400);
    expect(both.body.error.details).toEqual([{ path: 'page', message: 'use page or startingAfter, not both' }]);
    expect((await page('startingAfter=', own)).status).toBe(400);
  });
});
