import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../shared/testing/test-database.ts';
import { whileLocked } from './testing/while-locked.ts';
import { ruleSchema } from '../../shared/schemas/rule.ts';
import { hostileDeepLinks } from './testing/hostile-deep-links.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';

const geo = { type: 'geo', conditions: { countries: ['us', 'CA'] }, destinationUrl: 'https://example.com/na' };
const pct = (percentage: number) => ({ type: 'percentage', conditions: { percentage }, destinationUrl: `https://example.com/p${percentage}` });
const time = {
  type: 'time',
  conditions: { timezone: 'Europe/Berlin', days: ['monday', 'friday'], startTime: '22:00', endTime: '02:00' },
  destinationUrl: 'https://example.com/night',
};

describe.each(backends)('rules API on %s', (backend) => {
  let api: TestApi;
  let key: string;
  let campaignId: string;
  let linkId: string;

  const newCampaign = async (k = key) => (await api.request('POST', '/campaigns', { key: k, body: { name: 'rules' } })).body.data.id as string;
  const newLink = async (campaign: string, k = key) =>
    (await api.request('POST', '/links', { key: k, body: { destinationUrl: 'https://example.com', campaignId: campaign } })).body.data.id as string;
  const postRule = (body: object, k = key) => api.request('POST', '/rules', { key: k, body });

  beforeAll(async () => {
    api = await startTestApi(backend);
    ({ key } = await api.tenant());
    campaignId = await newCampaign();
    linkId = await newLink(campaignId);
  });
  afterAll(() => api?.close());

  it('creates with defaults priority 50 and enabled true (201), conditions normalised', async () => {
    const res = await postRule({ campaignId, linkId, ...geo });
    expect(res.status).toBe(201);
    const rule = ruleSchema.parse(res.body.data);
    expect(Object.keys(res.body.data).sort()).toEqual(Object.keys(rule).sort()); // no field beyond the schema
    expect(rule).toMatchObject({
      linkId,
      campaignId,
      name: '',
      type: 'geo',
      conditions: { countries: ['US', 'CA'], operator: 'in' },
      destinationUrl: 'https://example.com/na',
      priority: 50,
      enabled: true,
      deepLinkEnabled: false,
      deepLinkIos: null,
    });
    expect(rule.id).toMatch(/^rule_/);
    // Stamped by the database: recent by its clock, which need not be this process's.
    const [row] = await api.db.sql<{ now: Date }[]>`SELECT now()`;
    expect(Date.parse(rule.createdAt)).toBeGreaterThan(row!.now.getTime() - 60_000);
    expect(Date.parse(rule.createdAt)).toBeLessThanOrEqual(row!.now.getTime());
  });

  it('keeps every condition type intact through storage', async () => {
    const c = await newCampaign();
    const bodies = [
      { ...time, campaignId: c },
      { type: 'device', conditions: { devices: ['tablet'], os: ['ios', 'android'] }, destinationUrl: 'https://example.com/app', campaignId: c },
      { type: 'geo', conditions: { countries: ['de'], operator: 'not_in' }, destinationUrl: 'https://example.com/intl', campaignId: c },
      { ...pct(33.5), campaignId: c, priority: 1, enabled: false, name: 'A/B', deepLinkEnabled: true, deepLinkIos: 'app://x', deepLinkAndroid: 'app://y', deepLinkFallbackUrl: 'https://example.com/fb' },
    ];
    for (const body of bodies) {
      const res = await postRule(body);
      expect(res.status, JSON.stringify(body)).toBe(201);
      const expected = { ...body, conditions: body.type === 'geo' ? { countries: ['DE'], operator: 'not_in' } : body.conditions };
      expect(res.body.data).toMatchObject(expected);
      const listed = await api.request('GET', `/rules/${res.body.data.id}`, { key });
      expect(listed.body.data).toEqual(res.body.data);
    }
  });

  it('requires campaignId, type, conditions, destinationUrl and validates each by type', async () => {
    const cases: Array<[object, string[]]> = [
      [{ type: 'geo', conditions: { countries: ['US'] }, destinationUrl: 'https://e.com' }, ['campaignId']],
      [{ campaignId, conditions: { countries: ['US'] }, destinationUrl: 'https://e.com' }, ['type']],
      [{ campaignId, type: 'weather', conditions: {}, destinationUrl: 'https://e.com' }, ['type']],
      [{ campaignId, type: 'geo', destinationUrl: 'https://e.com' }, ['conditions']],
      [{ campaignId, type: 'geo', conditions: { countries: ['US'] } }, ['destinationUrl']],
      [{ campaignId, ...geo, destinationUrl: 'mailto:x@y.z' }, ['destinationUrl']],
      [{ campaignId, type: 'geo', conditions: { countries: ['XX'] }, destinationUrl: 'https://e.com' }, ['conditions.countries.0']],
      [{ campaignId, type: 'geo', conditions: { countries: ['USA'] }, destinationUrl: 'https://e.com' }, ['conditions.countries.0']],
      [{ campaignId, type: 'geo', conditions: { countries: [] }, destinationUrl: 'https://e.com' }, ['conditions.countries']],
      [{ campaignId, type: 'geo', conditions: { countries: ['US'], operator: 'near' }, destinationUrl: 'https://e.com' }, ['conditions.operator']],
      [{ campaignId, type: 'device', conditions: {}, destinationUrl: 'https://e.com' }, ['conditions']],
      [{ campaignId, type: 'device', conditions: { devices: ['phone'] }, destinationUrl: 'https://e.com' }, ['conditions.devices.0']],
      [{ campaignId, type: 'time', conditions: { ...time.conditions, timezone: 'Mars/Base' }, destinationUrl: 'https://e.com' }, ['conditions.timezone']],
      [{ campaignId, type: 'time', conditions: { ...time.conditions, days: ['Monday'] }, destinationUrl: 'https://e.com' }, ['conditions.days.0']],
      [{ campaignId, type: 'time', conditions: { ...time.conditions, startTime: '24:00' }, destinationUrl: 'https://e.com' }, ['conditions.startTime']],
      [{ campaignId, type: 'time', conditions: { ...time.conditions, endTime: '22:00' }, destinationUrl: 'https://e.com' }, ['conditions.endTime']],
      [{ campaignId, type: 'percentage', conditions: { percentage: 101 }, destinationUrl: 'https://e.com' }, ['conditions.percentage']],
      [{ campaignId, type: 'percentage', conditions: { percentage: -1 }, destinationUrl: 'https://e.com' }, ['conditions.percentage']],
      [{ campaignId, ...geo, priority: 0 }, ['priority']],
      [{ campaignId, ...geo, priority: 101 }, ['priority']],
      [{ campaignId, ...geo, priority: 5.5 }, ['priority']],
      [{ campaignId, ...geo, id: 'rule_mine' }, ['id']],
    ];
    for (const [body, paths] of cases) {
      const res = await postRule(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { path: string }) => d.path), JSON.stringify(body)).toEqual(paths);
    }
  });

  it('linkId must be a live link of the named campaign, in the workspace', async () => {
    const other = await newCampaign();
    const wrongCampaign = await postRule({ campaignId: other, linkId, ...geo });
    expect(wrongCampaign.status).toBe(400);
    expect(wrongCampaign.body.error.details).toEqual([{ path: 'linkId', message: expect.stringContaining('belongs to campaign') }]);
    const deleted = await newLink(campaignId);
    await api.request('DELETE', `/links/${deleted}`, { key });
    expect((await postRule({ campaignId, linkId: deleted, ...geo })).body.error.details).toEqual([{ path: 'linkId', message: 'link not found' }]);
    const stranger = await api.tenant();
    const theirCampaign = await newCampaign(stranger.key);
    const theirLink = await newLink(theirCampaign, stranger.key);
    expect((await postRule({ campaignId, linkId: theirLink, ...geo })).body.error.details).toEqual([{ path: 'linkId', message: 'link not found' }]);
    expect((await postRule({ campaignId: theirCampaign, ...geo })).body.error.details).toEqual([{ path: 'campaignId', message: 'campaign not found' }]);
  });

  it('PATCH updates the fields of spec 4.3 and sets updatedAt; enabled toggles both ways (spec section 3)', async () => {
    const { body } = await postRule({ campaignId, ...geo, name: 'first' });
    await new Promise((r) => setTimeout(r, 5));
    const res = await api.request('PATCH', `/rules/${body.data.id}`, {
      key,
      body: { name: 'renamed', priority: 90, enabled: false, conditions: { countries: ['fr'], operator: 'not_in' }, destinationUrl: 'https://example.com/fr' },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: body.data.id, name: 'renamed', priority: 90, enabled: false, conditions: { countries: ['FR'], operator: 'not_in' }, type: 'geo' });
    expect(Date.parse(res.body.data.updatedAt)).toBeGreaterThan(Date.parse(body.data.updatedAt));
    const back = await api.request('PATCH', `/rules/${body.data.id}`, { key, body: { enabled: true } });
    expect(back.body.data.enabled).toBe(true);
    expect(Date.parse(back.body.data.updatedAt)).toBeGreaterThanOrEqual(Date.parse(res.body.data.updatedAt));
  });

  it('PATCH refuses type, linkId, campaignId, bad priority and conditions of the wrong shape for the stored type', async () => {
    const { body } = await postRule({ campaignId, ...geo });
    const cases: Array<[object, string[]]> = [
      [{ type: 'device' }, ['type']],
      [{ linkId }, ['linkId']],
      [{ campaignId }, ['campaignId']],
      [{ priority: 0 }, ['priority']],
      [{ priority: 101 }, ['priority']],
      [{ conditions: { percentage: 10 } }, ['conditions.countries', 'conditions.percentage']],
      [{ conditions: { countries: ['ZZ'] } }, ['conditions.countries.0']],
      // One reason: an unknown field is not also "no field to update".
      [{ createdAt: '2020-01-01T00:00:00Z' }, ['createdAt']],
      [{}, ['(root)']],
    ];
    for (const [patch, paths] of cases) {
      const res = await api.request('PATCH', `/rules/${body.data.id}`, { key, body: patch });
      expect(res.status, JSON.stringify(patch)).toBe(400);
      expect(res.body.error.details.map((d: { path: string }) => d.path), JSON.stringify(patch)).toEqual(paths);
    }
    expect((await api.request('GET', `/rules/${body.data.id}`, { key })).body.data.type).toBe('geo');
  });

  it('refuses intent parts that run code or leave the web, on POST and PATCH (400)', async () => {
    const { body } = await postRule({ campaignId, linkId, ...geo, deepLinkEnabled: true });
    expect(body.data.id).toMatch(/^rule_/);
    for (const [field, value] of hostileDeepLinks) {
      for (const res of [await postRule({ campaignId, linkId, ...geo, deepLinkEnabled: true, [field]: value }), await api.request('PATCH', `/rules/${body.data.id}`, { key, body: { [field]: value } })]) {
        expect(res.status, value).toBe(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
        expect(res.body.error.details.map((d: { path: string }) => d.path)).toEqual([field]);
      }
    }
    expect((await api.request('PATCH', `/rules/${body.data.id}`, { key, body: { deepLinkAndroid: 'intent://x#Intent;scheme=myapp;S.browser_fallback_url=http%3A%2F%2Fexample.com;end' } })).status).toBe(200);
  });

  it('DELETE answers {id, deleted:true}, then 404; other workspaces get 404 for every operation', async () => {
    const { body } = await postRule({ campaignId, ...geo });
    const stranger = await api.tenant();
    expect((await api.request('GET', `/rules/${body.data.id}`, { key: stranger.key })).status).toBe(404);
    expect((await api.request('PATCH', `/rules/${body.data.id}`, { key: stranger.key, body: { priority: 1 } })).status).toBe(404);
    expect((await api.request('DELETE', `/rules/${body.data.id}`, { key: stranger.key })).status).toBe(404);
    expect((await api.request('GET', `/rules?campaignId=${campaignId}`, { key: stranger.key })).body.data).toEqual([]);

    const del = await api.request('DELETE', `/rules/${body.data.id}`, { key });
    expect(del.body).toEqual({ success: true, data: { id: body.data.id, deleted: true } });
    const again = await api.request('DELETE', `/rules/${body.data.id}`, { key });
    expect(again.status).toBe(404);
    expect(again.body.error).toEqual({ code: 'NOT_FOUND', message: 'Rule not found' });
    expect((await api.request('PATCH', '/rules/rule_unknown', { key, body: { priority: 3 } })).status).toBe(404);
  });

  it('lists newest first, paginated, filtered by linkId, campaignId, type and enabled', async () => {
    const c = await newCampaign();
    const l = await newLink(c);
    const a = (await postRule({ campaignId: c, linkId: l, ...geo })).body.data.id;
    const b = (await postRule({ campaignId: c, ...time, enabled: false })).body.data.id;
    const d = (await postRule({ campaignId: c, linkId: l, ...pct(10) })).body.data.id;
    const ids = async (q: string) => (await api.request('GET', `/rules?${q}`, { key })).body.data.map((r: { id: string }) => r.id);
    expect(await ids(`campaignId=${c}`)).toEqual([d, b, a]);
    expect(await ids(`linkId=${l}`)).toEqual([d, a]);
    expect(await ids(`campaignId=${c}&type=time`)).toEqual([b]);
    expect(await ids(`campaignId=${c}&enabled=false`)).toEqual([b]);
    const page = await api.request('GET', `/rules?campaignId=${c}&limit=2&page=2`, { key });
    expect(page.body.pagination).toEqual({ page: 2, limit: 2, total: 3, totalPages: 2 });
    expect(page.body.data.map((r: { id: string }) => r.id)).toEqual([a]);
    for (const q of ['type=weather', 'enabled=1', 'limit=0', 'page=-1', 'linkId=']) {
      expect((await api.request('GET', `/rules?${q}`, { key })).status, q).toBe(400);
    }
  });

  it('include=rules returns the link\'s own and campaign-wide rules in evaluation order', async () => {
    const c = await newCampaign();
    const l = await newLink(c);
    const other = await newLink(c);
    const campaignLow = (await postRule({ campaignId: c, ...geo, priority: 10 })).body.data.id;
    const campaignTie = (await postRule({ campaignId: c, ...geo, priority: 70 })).body.data.id;
    const linkTie = (await postRule({ campaignId: c, linkId: l, ...geo, priority: 70 })).body.data.id;
    const linkTop = (await postRule({ campaignId: c, linkId: l, ...time, priority: 99 })).body.data.id;
    const linkTieLater = (await postRule({ campaignId: c, linkId: l, ...geo, priority: 70 })).body.data.id;
    await postRule({ campaignId: c, linkId: other, ...geo, priority: 100 }); // another link's rule: not ours
    const res = await api.request('GET', `/links/${l}?include=rules`, { key });
    expect(res.body.data.rules.map((r: { id: string }) => r.id)).toEqual([linkTop, linkTie, linkTieLater, campaignTie, campaignLow]);
    expect(res.body.data.rules[0]).toMatchObject({ id: linkTop, type: 'time', conditions: time.conditions, destinationUrl: time.destinationUrl, priority: 99 });
  });

  describe('percentage budget (at most 100% per link, counting campaign-wide rules)', () => {
    it('accepts two 50% rules and refuses a third; disabled rules do not count', async () => {
      const c = await newCampaign();
      const l = await newLink(c);
      expect((await postRule({ campaignId: c, linkId: l, ...pct(50) })).status).toBe(201);
      expect((await postRule({ campaignId: c, linkId: l, ...pct(50) })).status).toBe(201);
      const third = await postRule({ campaignId: c, linkId: l, ...pct(0.5) });
      expect(third.status).toBe(400);
      expect(third.body.error.details).toEqual([{ path: 'conditions.percentage', message: expect.stringContaining('100.5%') }]);
      const off = await postRule({ campaignId: c, linkId: l, ...pct(30), enabled: false });
      expect(off.status).toBe(201);
      expect((await api.request('PATCH', `/rules/${off.body.data.id}`, { key, body: { enabled: true } })).status).toBe(400);
    });

    it('campaign-wide rules count against every link of the campaign', async () => {
      const c = await newCampaign();
      const l1 = await newLink(c);
      await newLink(c);
      expect((await postRule({ campaignId: c, linkId: l1, ...pct(70) })).status).toBe(201);
      expect((await postRule({ campaignId: c, ...pct(40) })).status).toBe(400);
      const wide = await postRule({ campaignId: c, ...pct(30) });
      expect(wide.status).toBe(201);
      expect((await postRule({ campaignId: c, linkId: l1, ...pct(1) })).status).toBe(400);
      expect((await api.request('PATCH', `/rules/${wide.body.data.id}`, { key, body: { conditions: { percentage: 31 } } })).status).toBe(400);
      expect((await api.request('PATCH', `/rules/${wide.body.data.id}`, { key, body: { conditions: { percentage: 20 } } })).status).toBe(200);
    });

    it('rules of a deleted link count no more: a campaign-wide rule takes the share they had (links are never undeleted)', async () => {
      const c = await newCampaign();
      const l = await newLink(c);
      expect((await postRule({ campaignId: c, linkId: l, ...pct(60) })).status).toBe(201);
      expect((await postRule({ campaignId: c, ...pct(50) })).status).toBe(400);
      expect((await api.request('DELETE', `/links/${l}`, { key })).status).toBe(200);
      expect((await postRule({ campaignId: c, ...pct(50) })).status).toBe(201);
    });

    it('holds under concurrent creates', async () => {
      const c = await newCampaign();
      const l = await newLink(c);
      const results = await Promise.all(Array.from({ length: 6 }, () => postRule({ campaignId: c, linkId: l, ...pct(40) })));
      expect(results.map((r) => r.status).sort()).toEqual([201, 201, 400, 400, 400, 400]);
    });

    it.runIf(backend === 'postgres')('two PATCHes of one rule at once cannot take a link past 100 %: the second sees the first', async () => {
      const c = await newCampaign();
      const l = await newLink(c);
      const rule = (await postRule({ campaignId: c, linkId: l, ...pct(60), enabled: false })).body.data.id;
      expect((await postRule({ campaignId: c, linkId: l, ...pct(40) })).status).toBe(201);
      // Each alone fits (60 + 40 enabled; 90 disabled); both together would be 90 + 40.
      const [enabling, widening] = await whileLocked(
        api.db,
        (tx) => tx`SELECT id FROM campaigns WHERE id = ${c} FOR UPDATE`,
        () => [
          api.request('PATCH', `/rules/${rule}`, { key, body: { enabled: true } }),
          api.request('PATCH', `/rules/${rule}`, { key, body: { conditions: { percentage: 90 } } }),
        ],
        2,
      );
      const statuses = [(await enabling).status, (await widening).status].sort();
      expect(statuses).toEqual([200, 400]);
      const stored = (await api.request('GET', `/rules/${rule}`, { key })).body.data;
      expect(stored.enabled && stored.conditions.percentage === 90).toBe(false);
    });

    it.runIf(backend === 'postgres')('a rule created on a link while the link moves to another campaign ends in the link\'s campaign, or is refused', async () => {
      const from = await newCampaign();
      const to = await newCampaign();
      const l = await newLink(from);
      // The link is held while the create runs, then moved as PATCH /links moves it.
      const creating = await whileLocked(
        api.db,
        (tx) => tx`SELECT id FROM links WHERE id = ${l} FOR UPDATE`,
        () => postRule({ campaignId: from, linkId: l, ...pct(10) }),
        1,
        async (tx) => {
          await tx`UPDATE rules SET campaign_id = ${to} WHERE link_id = ${l}`;
          await tx`UPDATE links SET campaign_id = ${to} WHERE id = ${l}`;
        },
      );
      const created = await creating;
      const rules = (await api.request('GET', `/links/${l}?include=rules`, { key })).body.data.rules as Array<{ id: string; campaignId: string }>;
      expect((await api.request('GET', `/links/${l}`, { key })).body.data.campaignId).toBe(to);
      if (created.status === 201) expect(rules.find((r) => r.id === created.body.data.id)?.campaignId).toBe(to);
      else expect(created.body.error.details[0].path).toBe('linkId');
      const stray = await api.db.sql`SELECT id FROM rules WHERE link_id = ${l} AND campaign_id <> ${to}`;
      expect(stray.length).toBe(0);
    });

    it.runIf(backend === 'postgres')('a link moving campaign while one of its rules is being enabled checks that rule as enabled', async () => {
      const from = await newCampaign();
      const to = await newCampaign();
      const l = await newLink(from);
      const rule = (await postRule({ campaignId: from, linkId: l, ...pct(60), enabled: false })).body.data.id;
      expect((await postRule({ campaignId: to, ...pct(50) })).status).toBe(201);
      // The rule's enabling commits while the move waits on it: 60 % beside the 50 % there.
      const moving = await whileLocked(
        api.db,
        (tx) => tx`UPDATE rules SET enabled = true WHERE id = ${rule}`,
        () => api.request('PATCH', `/links/${l}`, { key, body: { campaignId: to } }),
        1,
      );
      const moved = await moving;
      expect(moved.status).toBe(400);
      expect(moved.body.error.details[0].path).toBe('campaignId');
      expect((await api.request('GET', `/links/${l}`, { key })).body.data.campaignId).toBe(from);
      expect((await api.request('GET', `/rules/${rule}`, { key })).body.data).toMatchObject({ campaignId: from, enabled: true });
    });

    it.runIf(backend === 'postgres')('deleting a rule waits for its campaign\'s lock, as a link created or moved into the campaign takes it (the delete then lists that link)', async () => {
      const c = await newCampaign();
      const wide = (await postRule({ campaignId: c, ...pct(20) })).body.data.id;
      const deleting = await whileLocked(
        api.db,
        (tx) => tx`SELECT id FROM campaigns WHERE id = ${c} FOR UPDATE`,
        () => api.request('DELETE', `/rules/${wide}`, { key }),
        1,
      );
      expect((await deleting).status).toBe(200);
      expect((await api.request('GET', `/rules/${wide}`, { key })).status).toBe(404);
    });

    it.runIf(backend === 'postgres')('two PATCHes moving one link at once leave its rules in its campaign: each move is decided from the link as locked, not as read before', async () => {
      const a = await newCampaign();
      const b = await newCampaign();
      const l = await newLink(a);
      const rule = (await postRule({ campaignId: a, linkId: l, ...pct(60) })).body.data.id;
      // The second PATCH read the link in A, so as read it moves nothing; it runs after the
      // first moved the link to B, so it moves it back, and must take the rule back along.
      let toA: Promise<Awaited<ReturnType<typeof api.request>>> | undefined;
      const toB = await whileLocked(
        api.db,
        (tx) => tx`SELECT id FROM links WHERE id = ${l} FOR UPDATE`,
        () => api.request('PATCH', `/links/${l}`, { key, body: { campaignId: b } }),
        1,
        async () => {
          toA = api.request('PATCH', `/links/${l}`, { key, body: { campaignId: a, title: 'x' } });
          await expect
            .poll(async () => (await api.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)[0]!.n)
            .toBe(2);
        },
      );
      expect([(await toB).status, (await toA!).status]).toEqual([200, 200]);
      const link = (await api.request('GET', `/links/${l}?include=rules`, { key })).body.data;
      expect(link.campaignId).toBe(a);
      expect(link.rules.map((r: { id: string; campaignId: string }) => [r.id, r.campaignId])).toEqual([[rule, a]]);
      // The rule counts in A: a campaign-wide 60 % beside it would take the link to 120 %.
      expect((await postRule({ campaignId: a, ...pct(60) })).status).toBe(400);
    });

    it.runIf(backend === 'postgres')('a PATCH moving a link deleted while it waited answers 404 and moves none of its rules', async () => {
      const a = await newCampaign();
      const b = await newCampaign();
      const l = await newLink(a);
      const before = (await postRule({ campaignId: a, linkId: l, ...geo })).body.data;
      // The move waits on its new campaign's lock (taken first); the link is deleted meanwhile.
      const moving = await whileLocked(
        api.db,
        (tx) => tx`SELECT id FROM campaigns WHERE id = ${b} FOR UPDATE`,
        () => api.request('PATCH', `/links/${l}`, { key, body: { campaignId: b } }),
        1,
        async () => expect((await api.request('DELETE', `/links/${l}`, { key })).status).toBe(200),
      );
      expect((await moving).status).toBe(404);
      expect((await api.request('GET', `/rules/${before.id}`, { key })).body.data).toEqual(before);
    });

    it('a link moving campaign takes its rules along, only if they fit', async () => {
      const from = await newCampaign();
      const to = await newCampaign();
      const l = await newLink(from);
      const rule = (await postRule({ campaignId: from, linkId: l, ...pct(60) })).body.data.id;
      const wide = (await postRule({ campaignId: to, ...pct(50) })).body.data.id;
      const refused = await api.request('PATCH', `/links/${l}`, { key, body: { campaignId: to } });
      expect(refused.status).toBe(400);
      expect(refused.body.error.details[0].path).toBe('campaignId');
      expect((await api.request('GET', `/links/${l}`, { key })).body.data.campaignId).toBe(from);
      await api.request('PATCH', `/rules/${wide}`, { key, body: { conditions: { percentage: 40 } } });
      const moved = await api.request('PATCH', `/links/${l}`, { key, body: { campaignId: to } });
      expect(moved.status).toBe(200);
      expect((await api.request('GET', `/rules/${rule}`, { key })).body.data.campaignId).toBe(to);
      const withRules = await api.request('GET', `/links/${l}?include=rules`, { key });
      expect(withRules.body.data.rules.map((r: { id: string }) => r.id)).toEqual([rule, wide]);
    });
  });
});
