import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../shared/testing/test-database.ts';
import { linkSchema } from '../../shared/schemas/link.ts';
import { hostileDeepLinks } from './testing/hostile-deep-links.ts';
import { REDIRECT_BASE_URL, startTestApi, type TestApi } from './testing/api-harness.ts';

const future = () => new Date(Date.now() + 86_400_000).toISOString();
describe.each(backends)('links API on %s', (backend) => {
  let api: TestApi;
  let key: string;

  beforeAll(async () => {
    // A secret, so a test can register a webhook endpoint and see link.updated queued.
    api = await startTestApi(backend, { secret: randomBytes(32) });
    ({ key } = await api.tenant());
  });
  afterAll(() => api?.close());

  const post = (body: unknown, k = key) => api.request('POST', '/links', { key: k, body });

  it('creates a link with every field of spec 2.1 typed, defaults applied', async () => {
    const res = await post({ destinationUrl: 'https://example.com/landing?x=1' });
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    const link = linkSchema.strict().parse(res.body.data);
    expect(link.id).toMatch(/^link_[A-Za-z0-9]{22}$/);
    expect(link.shortCode).toMatch(/^[A-Za-z0-9]{7}$/);
    expect(link.shortUrl).toBe(`${REDIRECT_BASE_URL}/${link.shortCode}`);
    expect(link.redirectDomain).toBe('go.test:8080');
    expect(link).toMatchObject({
      destinationUrl: 'https://example.com/landing?x=1',
      defaultDestination: 'https://example.com/landing?x=1',
      title: '',
      description: '',
      enabled: true,
      password: null,
      expiresAt: null,
      clicksLimit: null,
      redirectBehavior: 'auto',
      domainId: null,
      deepLinkEnabled: false,
      deepLinkIos: null,
      deepLinkAndroid: null,
      deepLinkFallbackUrl: null,
      conversionTracking: false,
      trackingType: 'pixel',
      tags: [],
      forwardQuery: true,
      clicks: 0,
      uniqueClicks: 0,
      impressions: 0,
      conversions: 0,
      revenue: 0,
      lastClickedAt: null,
    });
    expect(link.campaignId).toMatch(/^campaign_/);
    // Stamped by the database: recent by its clock, which need not be this process's.
    const [row] = await api.db.sql<{ now: Date }[]>`SELECT now()`;
    expect(Date.parse(link.createdAt)).toBeGreaterThan(row!.now.getTime() - 60_000);
    expect(Date.parse(link.createdAt)).toBeLessThanOrEqual(row!.now.getTime());
    expect(link.updatedAt).toBe(link.createdAt);
  });

  it('joins the default campaign when campaignId is omitted', async () => {
    const { body: campaigns } = await api.request('GET', '/campaigns?limit=100', { key });
    const defaultCampaign = campaigns.data.find((c: { isDefault: boolean }) => c.isDefault);
    const { body } = await post({ destinationUrl: 'https://example.com' });
    expect(body.data.campaignId).toBe(defaultCampaign.id);
  });

  it('stores every optional field and masks the password', async () => {
    const { body: campaign } = await api.request('POST', '/campaigns', { key, body: { name: 'Spring' } });
    const expiresAt = future();
    const res = await post({
      destinationUrl: 'https://example.com/a',
      defaultDestination: 'https://example.com/fallback',
      shortCode: 'spring-Sale_1',
      title: 'Spring sale',
      description: 'All the things',
      campaignId: campaign.data.id,
      enabled: false,
      password: 'hunter22',
      expiresAt,
      expiredUrl: 'https://example.com/over',
      clicksLimit: 500,
      redirectBehavior: 'rule_only',
      deepLinkEnabled: true,
      deepLinkIos: 'myapp://sale',
      deepLinkAndroid: 'intent://sale#Intent;scheme=myapp;package=com.example;end',
      deepLinkFallbackUrl: 'https://example.com/app',
      conversionTracking: true,
      trackingType: 's2s',
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({
      shortCode: 'spring-Sale_1',
      shortUrl: `${REDIRECT_BASE_URL}/spring-Sale_1`,
      defaultDestination: 'https://example.com/fallback',
      campaignId: campaign.data.id,
      enabled: false,
      password: '********',
      expiresAt: new Date(expiresAt).toISOString(),
      expiredUrl: 'https://example.com/over',
      clicksLimit: 500,
      redirectBehavior: 'rule_only',
      deepLinkEnabled: true,
      deepLinkIos: 'myapp://sale',
      conversionTracking: true,
      trackingType: 's2s',
    });
    const [row] = await api.db.sql`SELECT password_hash FROM links WHERE id = ${res.body.data.id}`;
    expect(row!.passwordHash).toMatch(/^scrypt\$/);
    expect(row!.passwordHash).not.toContain('hunter22');
  });

  it('refuses a taken short code with 409 CONFLICT, and never reissues a deleted one', async () => {
    expect((await post({ destinationUrl: 'https://a.example', shortCode: 'taken1' })).status).toBe(201);
    const again = await post({ destinationUrl: 'https://b.example', shortCode: 'taken1' });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ success: false, error: { code: 'CONFLICT', message: expect.stringContaining('taken1') } });

    const { body } = await post({ destinationUrl: 'https://c.example', shortCode: 'gone-code' });
    expect((await api.request('DELETE', `/links/${body.data.id}`, { key })).status).toBe(200);
    expect((await post({ destinationUrl: 'https://d.example', shortCode: 'gone-code' })).status).toBe(409);
  });

  it('short codes are unique across workspaces on the default domain', async () => {
    const other = await api.tenant();
    expect((await post({ destinationUrl: 'https://a.example', shortCode: 'shared-space' })).status).toBe(201);
    expect((await post({ destinationUrl: 'https://a.example', shortCode: 'shared-space' }, other.key)).status).toBe(409);
  });

  it('generates distinct codes under concurrency', async () => {
    const results = await Promise.all(Array.from({ length: 40 }, () => post({ destinationUrl: 'https://many.example' })));
    expect(results.every((r) => r.status === 201)).toBe(true);
    expect(new Set(results.map((r) => r.body.data.shortCode)).size).toBe(40);
  });

  it('validates custom codes: reserved words, link_ prefix, characters, length', async () => {
    for (const shortCode of ['api', 'Health', 'link_abc', 'LINK_x12', 'ab', 'a'.repeat(65), 'has space', 'émoji', '-lead', 'p.gif']) {
      const res = await post({ destinationUrl: 'https://example.com', shortCode });
      expect(res.status, shortCode).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details[0].path).toBe('shortCode');
    }
  });

  it('accepts only http(s) destinations', async () => {
    for (const destinationUrl of ['ftp://example.com', 'javascript:alert(1)', 'example.com', '/relative', 'http://', 'data:text/html,hi', 'https://a.com/x\r\nSet-Cookie: a=b', 'https://a.com/x y', 'https://a.com/\tx']) {
      const res = await post({ destinationUrl });
      expect(res.status, destinationUrl).toBe(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual(expect.arrayContaining(['destinationUrl']));
    }
  });

  it('names every bad field and rejects unknown ones', async () => {
    const res = await post({ destinationUrl: 'nope', clicksLimit: 0, redirectBehavior: 'sometimes', color: 'red', expiresAt: '2001-01-01T00:00:00Z' });
    expect(res.status).toBe(400);
    const paths = res.body.error.details.map((d: { path: string }) => d.path).sort();
    expect(paths).toEqual(['clicksLimit', 'color', 'destinationUrl', 'expiresAt', 'redirectBehavior']);
  });

  it('refuses a campaign or domain that is not the workspace\'s', async () => {
    const other = await api.tenant();
    const { body: theirs } = await api.request('POST', '/campaigns', { key: other.key, body: { name: 'Theirs' } });
    const res = await post({ destinationUrl: 'https://example.com', campaignId: theirs.data.id });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: 'campaignId', message: 'campaign not found' }]);
    const domain = await post({ destinationUrl: 'https://example.com', domainId: 'domain_nope' });
    expect(domain.status).toBe(400);
    expect(domain.body.error.details).toEqual([{ path: 'domainId', message: 'domain not found' }]);
  });

  it('gets a link by id and by short code, with include=rules', async () => {
    const { body } = await post({ destinationUrl: 'https://example.com/get', shortCode: 'get-me' });
    const byId = await api.request('GET', `/links/${body.data.id}`, { key });
    expect(byId.status).toBe(200);
    expect(byId.body.data).toEqual(body.data);
    const byCode = await api.request('GET', '/links/get-me', { key });
    expect(byCode.body.data).toEqual(body.data);
    const withRules = await api.request('GET', '/links/get-me?include=rules', { key });
    expect(withRules.body.data).toEqual({ ...body.data, rules: [] });
    expect((await api.request('GET', '/links/get-me?include=everything', { key })).status).toBe(400);
  });

  it('answers NOT_FOUND "Link not found" for unknown ids and codes', async () => {
    for (const id of ['link_doesnotexist', 'no-such-code']) {
      const res = await api.request('GET', `/links/${id}`, { key });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ success: false, error: { code: 'NOT_FOUND', message: 'Link not found' } });
    }
  });

  it('deletes once, then ALREADY_DELETED; deleted links are gone from reads', async () => {
    const { body } = await post({ destinationUrl: 'https://example.com/del', shortCode: 'del-me' });
    const first = await api.request('DELETE', `/links/${body.data.id}`, { key });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ success: true, data: { id: body.data.id, deleted: true } });
    const second = await api.request('DELETE', `/links/${body.data.id}`, { key });
    expect(second.status).toBe(410);
    expect(second.body).toEqual({ success: false, error: { code: 'ALREADY_DELETED', message: 'Link has already been deleted' } });
    expect((await api.request('GET', `/links/${body.data.id}`, { key })).status).toBe(404);
    expect((await api.request('GET', '/links/del-me', { key })).status).toBe(404);
    expect((await api.request('PATCH', `/links/${body.data.id}`, { key, body: { title: 'x' } })).status).toBe(404);
    const unknown = await api.request('DELETE', '/links/link_nothinghere', { key });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toEqual({ code: 'NOT_FOUND', message: 'Link not found' });
  });

  it('deletes by short code', async () => {
    const { body } = await post({ destinationUrl: 'https://example.com/del', shortCode: 'del-by-code' });
    const res = await api.request('DELETE', '/links/del-by-code', { key });
    expect(res.body).toEqual({ success: true, data: { id: body.data.id, deleted: true } });
  });

  it('updates fields, keeps the rest, sets updatedAt; defaultDestination follows destination when unset', async () => {
    const { body } = await post({ destinationUrl: 'https://example.com/old', title: 'Old', password: 'secret12' });
    await new Promise((r) => setTimeout(r, 5));
    const res = await api.request('PATCH', `/links/${body.data.id}`, {
      key,
      body: { destinationUrl: 'https://example.com/new', title: 'New', password: null, clicksLimit: 10, enabled: false },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      destinationUrl: 'https://example.com/new',
      defaultDestination: 'https://example.com/new',
      title: 'New',
      password: null,
      clicksLimit: 10,
      enabled: false,
      shortCode: body.data.shortCode,
      createdAt: body.data.createdAt,
    });
    expect(Date.parse(res.body.data.updatedAt)).toBeGreaterThan(Date.parse(body.data.updatedAt));
    const pinned = await api.request('PATCH', `/links/${body.data.id}`, { key, body: { defaultDestination: 'https://example.com/pinned' } });
    expect(pinned.body.data.defaultDestination).toBe('https://example.com/pinned');
    const reset = await api.request('PATCH', `/links/${body.data.id}`, { key, body: { defaultDestination: null, password: 'newpass1' } });
    expect(reset.body.data).toMatchObject({ defaultDestination: 'https://example.com/new', password: '********' });
  });

  it('a PATCH that changes nothing keeps updatedAt and queues no snapshot update and no link.updated event; a real change does', async () => {
    const { key: own, workspaceId } = await api.tenant();
    expect((await api.request('POST', '/webhooks', { key: own, body: { url: 'https://hooks.example.com/noop', events: ['link.updated'] } })).status).toBe(201);
    const expiresMs = Date.now() + 86_400_000;
    const created = await post(
      { destinationUrl: 'https://example.com/same', title: 'Same', tags: ['Spring Sale', 'eu'], password: 'secret12', expiresAt: new Date(expiresMs).toISOString(), clicksLimit: 5, forwardQuery: 'override_utm' },
      own,
    );
    expect(created.status).toBe(201);
    const link = created.body.data;
    /** What a change of the link queues: its webhook events and its snapshot generation. */
    const queued = async () => ({
      events: (await api.db.sql<{ type: string }[]>`SELECT type FROM webhook_outbox WHERE workspace_id = ${workspaceId} AND data->>'id' = ${link.id} ORDER BY seq`).map((r) => r.type),
      generation: String((await api.db.sql<{ generation: string }[]>`SELECT generation FROM snapshot_outbox WHERE link_id = ${link.id}`)[0]?.generation),
    });
    const before = await queued();
    expect(before.events).toEqual([]);
    await new Promise((r) => setTimeout(r, 5));

    // Every field as stored, in other spellings that normalise to it: the tags' case and
    // spaces, the expiry's offset, the same password (stored hashed with its own salt).
    const same = {
      destinationUrl: ' https://example.com/same ',
      title: 'Same',
      tags: [' spring   SALE', 'EU'],
      password: 'secret12',
      expiresAt: new Date(expiresMs + 2 * 3_600_000).toISOString().replace('Z', '+02:00'),
      clicksLimit: 5,
      forwardQuery: 'override_utm',
      enabled: true,
      defaultDestination: null,
      deepLinkIos: null,
      campaignId: link.campaignId,
    };
    const noop = await api.request('PATCH', `/links/${link.id}`, { key: own, body: same });
    expect(noop.status).toBe(200);
    expect(noop.body.data).toEqual({ ...link, updatedAt: link.updatedAt });
    expect((await api.request('PATCH', `/links/${link.shortCode}`, { key: own, body: { title: 'Same' } })).body.data.updatedAt).toBe(link.updatedAt);
    expect((await api.request('GET', `/links/${link.id}`, { key: own })).body.data.updatedAt).toBe(link.updatedAt);
    expect(await queued()).toEqual(before);

    // One field that differs among equal ones is a change: updatedAt moves, one event, a new generation.
    const changed = await api.request('PATCH', `/links/${link.id}`, { key: own, body: { ...same, title: 'Changed' } });
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ title: 'Changed', tags: ['spring sale', 'eu'], password: '********' });
    expect(Date.parse(changed.body.data.updatedAt)).toBeGreaterThan(Date.parse(link.updatedAt));
    const after = await queued();
    expect(after.events).toEqual(['link.updated']);
    expect(BigInt(after.generation)).toBeGreaterThan(BigInt(before.generation));
    // A new password is a change too, though the answer reads the same.
    const repassed = await api.request('PATCH', `/links/${link.id}`, { key: own, body: { password: 'other123' } });
    expect(Date.parse(repassed.body.data.updatedAt)).toBeGreaterThan(Date.parse(changed.body.data.updatedAt));
    expect((await queued()).events).toEqual(['link.updated', 'link.updated']);
  });

  it('refuses intent parts that run code or leave the web, on POST and PATCH (400), and keeps http(s) fallbacks', async () => {
    const { body } = await post({ destinationUrl: 'https://example.com', deepLinkEnabled: true });
    for (const [field, value] of hostileDeepLinks) {
      for (const res of [await post({ destinationUrl: 'https://example.com', deepLinkEnabled: true, [field]: value }), await api.request('PATCH', `/links/${body.data.id}`, { key, body: { [field]: value } })]) {
        expect(res.status, value).toBe(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
        expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual([field]);
      }
    }
    const safe = 'intent://x#Intent;scheme=myapp;package=com.example.app;S.browser_fallback_url=https%3A%2F%2Fexample.com%2Ffb;end';
    const ok = await api.request('PATCH', `/links/${body.data.id}`, { key, body: { deepLinkAndroid: safe } });
    expect(ok.status).toBe(200);
    expect(ok.body.data.deepLinkAndroid).toBe(safe);
  });

  it('refuses immutable, unknown and empty updates', async () => {
    const { body } = await post({ destinationUrl: 'https://example.com' });
    for (const [patch, details] of [
      // Named, as rules name theirs: the one reason, not "unknown field" plus "no field to update".
      [{ shortCode: 'newcode' }, [{ path: 'shortCode', message: 'shortCode cannot be changed after creation' }]],
      [{ domainId: null, title: 'x' }, [{ path: 'domainId', message: 'domainId cannot be changed after creation' }]],
      [{ id: 'link_x' }, [{ path: 'id', message: 'unknown field' }]],
      [{ clicks: 5 }, [{ path: 'clicks', message: 'unknown field' }]],
      [{}, [{ path: '(root)', message: 'must contain at least one field to update' }]],
    ] as const) {
      const res = await api.request('PATCH', `/links/${body.data.id}`, { key, body: patch });
      expect(res.status, JSON.stringify(patch)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details, JSON.stringify(patch)).toEqual(details);
    }
  });

  it('lists newest first with pagination and filters', async () => {
    const tenant = await api.tenant();
    const { body: c } = await api.request('POST', '/campaigns', { key: tenant.key, body: { name: 'Filter' } });
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const { body } = await post(
        {
          destinationUrl: `https://shop.example/item-${i}`,
          title: i === 3 ? 'Needle 100%' : `Item ${i}`,
          enabled: i % 2 === 0,
          ...(i < 2 ? { campaignId: c.data.id } : {}),
        },
        tenant.key,
      );
      made.push(body.data.id);
    }
    const page1 = await api.request('GET', '/links?limit=2', { key: tenant.key });
    expect(page1.body.pagination).toEqual({ page: 1, limit: 2, total: 5, totalPages: 3 });
    expect(page1.body.data.map((l: { id: string }) => l.id)).toEqual([made[4], made[3]]);
    const page3 = await api.request('GET', '/links?limit=2&page=3', { key: tenant.key });
    expect(page3.body.data.map((l: { id: string }) => l.id)).toEqual([made[0]]);
    const beyond = await api.request('GET', '/links?limit=2&page=9', { key: tenant.key });
    expect(beyond.body.data).toEqual([]);

    const ids = async (query: string) => (await api.request('GET', `/links?${query}`, { key: tenant.key })).body.data.map((l: { id: string }) => l.id);
    expect(await ids(`campaignId=${c.data.id}`)).toEqual([made[1], made[0]]);
    expect(await ids('enabled=false')).toEqual([made[3], made[1]]);
    expect(await ids('q=needle%20100%25')).toEqual([made[3]]);
    expect(await ids('q=%25')).toEqual([made[3]]); // a literal %, not a wildcard: only the needle has one
    expect(await ids('q=item-2')).toEqual([made[2]]);
    expect(await ids('domainId=domain_none')).toEqual([]);
  });

  it('lists the links named by ids (up to 100), in the list order, leaving out ids of no live link of the workspace', async () => {
    const tenant = await api.tenant();
    const made: string[] = [];
    for (let i = 0; i < 4; i++) made.push((await post({ destinationUrl: `https://shop.example/named-${i}` }, tenant.key)).body.data.id);
    const elsewhere = (await post({ destinationUrl: 'https://shop.example/theirs' })).body.data.id;
    expect((await api.request('DELETE', `/links/${made[3]}`, { key: tenant.key })).status).toBe(200);
    const listed = async (query: string) => {
      const res = await api.request('GET', `/links?${query}`, { key: tenant.key });
      expect(res.status, query).toBe(200);
      return { ids: res.body.data.map((l: { id: string }) => l.id), total: res.body.pagination.total };
    };
    expect(await listed(`ids=${made[0]},${made[2]}`)).toEqual({ ids: [made[2], made[0]], total: 2 });
    // Repeated, as every list parameter; another workspace's link, a deleted one and an id of nothing are left out.
    expect(await listed(`ids=${made[1]}&ids=${elsewhere},${made[3]},link_nothing`)).toEqual({ ids: [made[1]], total: 1 });
    // With the other filters (AND), and paginated as any list: the total counts every match.
    expect(await listed(`ids=${made[0]},${made[1]}&q=named-1`)).toEqual({ ids: [made[1]], total: 1 });
    expect(await listed(`ids=${made[0]},${made[1]},${made[2]}&limit=2`)).toEqual({ ids: [made[2], made[1]], total: 3 });
    expect(await listed(`ids=${made[0]},${made[1]},${made[2]}&limit=2&startingAfter=${made[1]}`)).toEqual({ ids: [made[0]], total: 3 });
    for (const [query, detail] of [
      ['ids=', { path: 'ids.0', message: 'must not be empty' }],
      [`ids=${made[0]},`, { path: 'ids.1', message: 'must not be empty' }],
      [`ids=${Array.from({ length: 101 }, (_, i) => `link_${i}`).join(',')}`, { path: 'ids', message: 'at most 100 ids' }],
      [`ids=${'x'.repeat(101)}`, { path: 'ids.0', message: 'must be at most 100 characters' }],
    ] as const) {
      const res = await api.request('GET', `/links?${query}`, { key: tenant.key });
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details, query).toEqual([detail]);
    }
  });

  it('rejects bad list queries', async () => {
    for (const query of ['page=0', 'limit=101', 'limit=abc', 'enabled=yes', 'page=1&page=2', 'sort=asc', 'q=']) {
      const res = await api.request('GET', `/links?${query}`, { key });
      expect(res.status, query).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    // Out of range says the range, however many digits; not a number says so.
    for (const [query, detail] of [
      ['page=0', { path: 'page', message: 'must be 1 to 1000000' }],
      ['page=10000000', { path: 'page', message: 'must be 1 to 1000000' }],
      ['page=1000000000000', { path: 'page', message: 'must be 1 to 1000000' }],
      ['limit=101', { path: 'limit', message: 'must be 1 to 100' }],
      ['limit=-1', { path: 'limit', message: 'must be a whole number' }],
      ['page=1e3', { path: 'page', message: 'must be a whole number' }],
      // Only list parameters (tag) may be repeated.
      ['page=1&page=2', { path: 'page', message: 'given more than once; this parameter takes one value' }],
      ['enabled=true&enabled=true', { path: 'enabled', message: 'given more than once; this parameter takes one value' }],
      ['q=a&q=b', { path: 'q', message: 'given more than once; this parameter takes one value' }],
    ] as const) {
      expect((await api.request('GET', `/links?${query}`, { key })).body.error.details, query).toEqual([detail]);
    }
  });
});
