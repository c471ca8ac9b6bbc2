import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../shared/testing/test-database.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';

describe.each(backends)('link tags and query forwarding on %s', (backend) => {
  let api: TestApi;
  let key: string;

  beforeAll(async () => {
    api = await startTestApi(backend);
    ({ key } = await api.tenant());
  });
  afterAll(() => api?.close());

  const post = (body: Record<string, unknown>, k = key) => api.request('POST', '/links', { key: k, body: { destinationUrl: 'https://example.com/t', ...body } });
  const codes = async (query: string, k = key) => {
    const res = await api.request('GET', `/links?limit=100&${query}`, { key: k });
    expect(res.status).toBe(200);
    return (res.body.data as { shortCode: string }[]).map((l) => l.shortCode).sort();
  };

  it('stores tags normalised (case, spaces, Unicode form, duplicates) and replaces them on PATCH', async () => {
    const res = await post({ shortCode: 'tag-norm', tags: ['  Summer   Sale ', 'summer sale', 'Cafe\u0301', 'EU'] });
    expect(res.status).toBe(201);
    expect(res.body.data.tags).toEqual(['summer sale', 'caf\u00e9', 'eu']);
    const patched = await api.request('PATCH', `/links/${res.body.data.id}`, { key, body: { tags: ['Winter'] } });
    expect(patched.body.data.tags).toEqual(['winter']);
    const read = await api.request('GET', '/links/tag-norm', { key });
    expect(read.body.data.tags).toEqual(['winter']);
    const cleared = await api.request('PATCH', `/links/${res.body.data.id}`, { key, body: { tags: [] } });
    expect(cleared.body.data.tags).toEqual([]);
  });

  it('filters by any of the tags given, and lists the workspace tags with live link counts', async () => {
    const { key: own } = await api.tenant();
    await post({ shortCode: 'tf-a', tags: ['red', 'blue'] }, own);
    await post({ shortCode: 'tf-b', tags: ['Blue'] }, own);
    await post({ shortCode: 'tf-c', tags: ['green'] }, own);
    const gone = await post({ shortCode: 'tf-d', tags: ['green', 'gone'] }, own);
    await api.request('DELETE', `/links/${gone.body.data.id}`, { key: own });
    await post({ shortCode: 'tf-other', tags: ['red'] }); // another workspace

    expect(await codes('tag=red', own)).toEqual(['tf-a']);
    expect(await codes('tag=BLUE', own)).toEqual(['tf-a', 'tf-b']);
    expect(await codes('tag=red,green', own)).toEqual(['tf-a', 'tf-c']);
    expect(await codes('tag=gone', own)).toEqual([]);
    // The parameter repeated (as Dub and most HTTP clients send arrays) is its values comma-joined.
    expect(await codes('tag=red&tag=green', own)).toEqual(['tf-a', 'tf-c']);
    expect(await codes('tag=RED&tag=blue,gone&tag=red', own)).toEqual(['tf-a', 'tf-b']);
    expect(await codes('tag=gone&tag=gone', own)).toEqual([]);

    const tags = await api.request('GET', '/tags', { key: own });
    expect(tags.status).toBe(200);
    expect(tags.body.data).toEqual([
      { name: 'blue', linkCount: 2 },
      { name: 'green', linkCount: 1 },
      { name: 'red', linkCount: 1 },
    ]);
    expect(tags.body.pagination).toEqual({ page: 1, limit: 20, total: 3, totalPages: 1 });
    const page2 = await api.request('GET', '/tags?limit=2&page=2', { key: own });
    expect(page2.body.data).toEqual([{ name: 'red', linkCount: 1 }]);
    expect(page2.body.pagination.total).toBe(3);
    expect((await api.request('GET', '/tags?q=RE', { key: own })).body.data).toEqual([
      { name: 'green', linkCount: 1 },
      { name: 'red', linkCount: 1 },
    ]);
  });

  it('finds tags containing q spelled as tags are stored (Unicode form, whitespace runs, case), % and _ taken literally', async () => {
    const { key: own } = await api.tenant();
    expect((await post({ tags: ['Summer  Sale', 'Cafe\u0301 Deals', '50%_off', 'summer'] }, own)).status).toBe(201);
    const names = async (q: string) => {
      const res = await api.request('GET', `/tags?q=${encodeURIComponent(q)}`, { key: own });
      expect(res.status, q).toBe(200);
      return (res.body.data as { name: string }[]).map((t) => t.name);
    };
    expect(await names('Summer  Sale')).toEqual(['summer sale']);
    expect(await names('SUMMER\tSALE')).toEqual(['summer sale']);
    expect(await names('Cafe\u0301 Deals')).toEqual(['caf\u00e9 deals']);
    // A part of a tag, not a whole one: not trimmed, so a leading space is a word's start.
    expect(await names('R  S')).toEqual(['summer sale']);
    expect(await names(' sale')).toEqual(['summer sale']);
    expect(await names('%')).toEqual(['50%_off']);
    expect(await names('_')).toEqual(['50%_off']);
  });

  it('refuses bad tags and tag filters with 400 naming the field', async () => {
    const bad: Array<[unknown, string]> = [
      [['a,b'], 'tags.0'],
      [[''], 'tags.0'],
      [['   '], 'tags.0'],
      [['x'.repeat(51)], 'tags.0'],
      [['ok', 'bell\u0007'], 'tags.1'],
      [Array.from({ length: 21 }, (_, i) => `t${i}`), 'tags'],
      ['solo', 'tags'],
      [[1], 'tags.0'],
    ];
    for (const [tags, path] of bad) {
      const res = await post({ tags });
      expect(res.status, JSON.stringify(tags)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    // One reason each: an empty tag is empty (not also "contains commas").
    for (const tags of [[''], ['   ']]) {
      expect((await post({ tags })).body.error.details, JSON.stringify(tags)).toEqual([{ path: 'tags.0', message: 'must not be empty' }]);
    }
    // The limit counts tags after normalising: 21 spellings of one tag are one tag.
    const spellings = await post({ tags: [...Array.from({ length: 20 }, () => 'Sale'), ' SALE '] });
    expect(spellings.status).toBe(201);
    expect(spellings.body.data.tags).toEqual(['sale']);
    for (const query of ['tag=', 'tag=a,,b', `tag=${'x'.repeat(51)}`, 'tag=a&tag=', 'tag=a&tag=b,,c']) {
      const res = await api.request('GET', `/links?${query}`, { key });
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    // A bad value of a repeated tag is named by its place among all the values.
    expect((await api.request('GET', '/links?tag=a&tag=b,', { key })).body.error.details).toEqual([{ path: 'tag.2', message: 'must not be empty' }]);
    expect((await api.request('GET', `/links?${Array.from({ length: 21 }, (_, i) => `tag=t${i}`).join('&')}`, { key })).body.error.details).toEqual([
      { path: 'tag', message: 'Too big: expected array to have <=20 items' },
    ]);
    for (const query of ['limit=0', 'page=x', 'q=', 'sort=name']) {
      const res = await api.request('GET', `/tags?${query}`, { key });
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    expect((await api.request('GET', '/tags')).status).toBe(401);
  });

  it('takes forwardQuery true, false or "override_utm" (default true) and refuses anything else', async () => {
    expect((await post({})).body.data.forwardQuery).toBe(true);
    const off = await post({ forwardQuery: false });
    expect(off.body.data.forwardQuery).toBe(false);
    const utm = await api.request('PATCH', `/links/${off.body.data.id}`, { key, body: { forwardQuery: 'override_utm' } });
    expect(utm.body.data.forwardQuery).toBe('override_utm');
    for (const forwardQuery of ['override', 'true', 1, null]) {
      const res = await post({ forwardQuery });
      expect(res.status, String(forwardQuery)).toBe(400);
      expect(res.body.error.details).toEqual([{ path: 'forwardQuery', message: 'must be true, false or "override_utm"' }]);
    }
  });
});
