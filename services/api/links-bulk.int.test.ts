import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../shared/testing/test-database.ts';
import { linkSchema } from '../../shared/schemas/link.ts';
import { verifyPassword } from '../../shared/auth/password-hash.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';
import { whileLocked } from './testing/while-locked.ts';

type Item = { index: number; success: true; data: any } | { index: number; success: false; error: { code: string; message: string; details?: { path: string }[] } };

describe.each(backends)('bulk links on %s', (backend) => {
  let api: TestApi;
  let key: string;
  let workspaceId: string;

  beforeAll(async () => {
    // A secret, so a test can register a webhook endpoint and see link.updated queued.
    api = await startTestApi(backend, { secret: randomBytes(32) });
    ({ key, workspaceId } = await api.tenant());
  });
  afterAll(() => api?.close());

  const bulk = (method: string, body: unknown, k = key) => api.request(method, '/links/bulk', { key: k, body });
  const items = (res: { body: { data: Item[] } }) => res.body.data;
  const errorCodes = (res: { body: { data: Item[] } }) => items(res).map((i) => (i.success ? 'ok' : i.error.code));

  it('creates the good items and answers each item in order; a bad item fails alone', async () => {
    await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/x', shortCode: 'bulk-taken' } });
    const { key: otherKey } = await api.tenant();
    const foreign = (await api.request('POST', '/campaigns', { key: otherKey, body: { name: 'theirs' } })).body.data.id;
    const res = await bulk('POST', {
      links: [
        { destinationUrl: 'https://example.com/1', shortCode: 'bulk-one', tags: ['Bulk'] },
        { destinationUrl: 'ftp://example.com/2' },
        { destinationUrl: 'https://example.com/3', shortCode: 'bulk-taken' },
        { destinationUrl: 'https://example.com/4', shortCode: 'bulk-twice' },
        { destinationUrl: 'https://example.com/5', shortCode: 'bulk-twice' },
        { destinationUrl: 'https://example.com/6', campaignId: foreign },
        { destinationUrl: 'https://example.com/7', domainId: 'domain_nope' },
        'not an object',
        { destinationUrl: 'https://example.com/9', color: 'red' },
        { destinationUrl: 'https://example.com/10', password: 'secret-10' },
      ],
    });
    expect(res.status).toBe(200);
    expect(items(res).map((i) => i.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(errorCodes(res)).toEqual(['ok', 'VALIDATION_ERROR', 'CONFLICT', 'ok', 'CONFLICT', 'VALIDATION_ERROR', 'VALIDATION_ERROR', 'VALIDATION_ERROR', 'VALIDATION_ERROR', 'ok']);
    const [first, bad, taken, , twice, wrongCampaign, wrongDomain, , unknownField, locked] = items(res);
    expect(!taken!.success && taken!.error.message).toBe('Short code "bulk-taken" is already taken on this domain');
    expect(!twice!.success && twice!.error.message).toBe('Short code "bulk-twice" is given to an earlier item of this request too');
    expect(first!.success && linkSchema.strict().parse(first!.data)).toMatchObject({ shortCode: 'bulk-one', tags: ['bulk'], clicks: 0 });
    expect(!bad!.success && bad!.error.details![0]!.path).toBe('destinationUrl');
    expect(!wrongCampaign!.success && wrongCampaign!.error.details![0]!.path).toBe('campaignId');
    expect(!wrongDomain!.success && wrongDomain!.error.details![0]!.path).toBe('domainId');
    expect(!unknownField!.success && unknownField!.error.details![0]!.path).toBe('color');
    expect(locked!.success && locked!.data.password).toBe('********');
    const stored = await api.db.sql<{ shortCode: string }[]>`SELECT short_code FROM links WHERE workspace_id = ${workspaceId} AND destination_url LIKE 'https://example.com/_' ORDER BY short_code`;
    expect(stored.length).toBe(3);
    expect(stored.map((r) => r.shortCode)).toContain('bulk-twice');
  });

  it('creates 1,000 links in one request, which counts once against the rate limit', async () => {
    const { key: starter } = await api.tenant({ plan: 'starter' });
    const links = Array.from({ length: 1_000 }, (_, i) => ({ destinationUrl: `https://example.com/many/${i}`, title: `Many ${i}` }));
    const res = await bulk('POST', { links }, starter);
    expect(res.status).toBe(200);
    expect(items(res).every((i) => i.success)).toBe(true);
    expect(new Set(items(res).map((i) => i.success && i.data.shortCode)).size).toBe(1_000);
    expect(res.headers.get('x-ratelimit-limit')).toBe('100');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('99');
    const list = await api.request('GET', '/links?limit=1', { key: starter });
    expect(list.body.pagination.total).toBe(1_000);
  });

  it('past one write chunk: a code given twice fails the later item across chunks, an invalid item takes no code, the rest are created in order', async () => {
    const { key: own, workspaceId: ws } = await api.tenant();
    const { key: otherKey } = await api.tenant();
    const foreign = (await api.request('POST', '/campaigns', { key: otherKey, body: { name: 'theirs' } })).body.data.id;
    const links: Array<Record<string, unknown>> = Array.from({ length: 700 }, (_, i) => ({ destinationUrl: `https://example.com/chunk/${i}`, shortCode: `chunk-${i}` }));
    links[600] = { destinationUrl: 'https://example.com/chunk/again', shortCode: 'chunk-5' };
    links[3] = { destinationUrl: 'https://example.com/chunk/foreign', shortCode: 'chunk-free', campaignId: foreign };
    links[650] = { destinationUrl: 'https://example.com/chunk/free', shortCode: 'chunk-free' };
    const res = await bulk('POST', { links }, own);
    expect(res.status).toBe(200);
    const answered = items(res);
    expect(answered.map((i) => i.index)).toEqual(links.map((_, i) => i));
    expect(answered.flatMap((i) => (i.success ? [] : [[i.index, i.error.code]]))).toEqual([
      [3, 'VALIDATION_ERROR'],
      [600, 'CONFLICT'],
    ]);
    expect(!answered[600]!.success && answered[600]!.error.message).toBe('Short code "chunk-5" is given to an earlier item of this request too');
    expect(answered[650]!.success && answered[650]!.data.shortCode).toBe('chunk-free');
    const [stored] = await api.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM links WHERE workspace_id = ${ws}`;
    expect(stored!.n).toBe(698);
  });

  it.each([
    ['an outage (SQLSTATE 57P01)', 'outage', 'SERVICE_UNAVAILABLE'],
    ['a bug (any other error)', 'bug', 'INTERNAL_ERROR'],
  ])('a write chunk failing after an earlier one was stored, with %s: the stored items are answered created, the rest failed with its code; a retry with the Idempotency-Key replays that, creating nothing again', async (_, kind, code) => {
    const { key: own, workspaceId: ws } = await api.tenant();
    // Stands in for Postgres going away (or a statement failing) between two chunks: the first 500 are committed by then.
    await api.db.sql.unsafe(`
      CREATE OR REPLACE FUNCTION fail_bulk_chunk() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.destination_url = 'https://example.com/chunk-fails/outage' THEN RAISE EXCEPTION 'terminating connection' USING ERRCODE = 'admin_shutdown'; END IF;
        IF NEW.destination_url = 'https://example.com/chunk-fails/bug' THEN RAISE EXCEPTION 'a bug'; END IF;
        RETURN NEW;
      END $$`);
    await api.db.sql.unsafe('DROP TRIGGER IF EXISTS fail_bulk_chunk ON links');
    await api.db.sql.unsafe('CREATE TRIGGER fail_bulk_chunk BEFORE INSERT ON links FOR EACH ROW EXECUTE FUNCTION fail_bulk_chunk()');
    try {
      const links: Array<Record<string, unknown>> = Array.from({ length: 600 }, (_, i) => ({ destinationUrl: `https://example.com/chunk-fails/${i}` }));
      links[2] = { destinationUrl: 'ftp://example.com/invalid' };
      links[550] = { destinationUrl: `https://example.com/chunk-fails/${kind}` };
      const send = () => api.request('POST', '/links/bulk', { key: own, body: { links }, headers: { 'idempotency-key': `chunk-fails-${kind}` } });
      const res = await send();
      expect(res.status).toBe(200);
      const answered = items(res);
      expect(answered.map((i) => i.index)).toEqual(links.map((__, i) => i));
      // Valid items 0-500 (the invalid one takes no place in a chunk) were the first chunk.
      expect(answered.slice(0, 501).filter((i) => !i.success).map((i) => i.index)).toEqual([2]);
      expect(answered.slice(501).every((i) => !i.success && i.error.code === code)).toBe(true);
      const failed = answered[550]!;
      expect(!failed.success && failed.error.message).toMatch(/^Not created: some of the request's items were written, then writing this one failed/);
      const stored = () => api.db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM links WHERE workspace_id = ${ws} AND deleted_at IS NULL`.then((r) => r[0]!.n);
      expect(await stored()).toBe(500);
      const created = answered.filter((i) => i.success).map((i) => (i as { data: { id: string } }).data.id);
      const ids = await api.db.sql<{ id: string }[]>`SELECT id FROM links WHERE workspace_id = ${ws} ORDER BY id`;
      expect(ids.map((r) => r.id)).toEqual([...created].sort());
      // The store is back; the same key and body replay the answer and create nothing.
      await api.db.sql.unsafe('DROP TRIGGER fail_bulk_chunk ON links');
      const again = await send();
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(again.body).toEqual(res.body);
      expect(await stored()).toBe(500);
    } finally {
      await api.db.sql.unsafe('DROP TRIGGER IF EXISTS fail_bulk_chunk ON links');
    }
  });

  it('updates with one patch for many ids, or a patch per link; unknown, deleted, duplicate and invalid items fail alone', async () => {
    const created = items(await bulk('POST', { links: [1, 2, 3, 4].map((n) => ({ destinationUrl: `https://example.com/u${n}`, shortCode: `bulk-u${n}` })) }));
    const [a, b, c, d] = created.map((i) => (i.success ? (i.data.id as string) : ''));
    await api.request('DELETE', `/links/${d}`, { key });
    const { key: otherKey } = await api.tenant();
    const theirs = (await api.request('POST', '/links', { key: otherKey, body: { destinationUrl: 'https://example.com/theirs' } })).body.data.id;

    const same = await bulk('PATCH', { ids: [a, b, d, theirs, a], patch: { title: 'Same', tags: ['x'] } });
    expect(same.status).toBe(200);
    expect(errorCodes(same)).toEqual(['ok', 'ok', 'NOT_FOUND', 'NOT_FOUND', 'VALIDATION_ERROR']);
    expect(items(same)[0]!.success && items(same)[0]!).toMatchObject({ data: { id: a, title: 'Same', tags: ['x'], clicks: 0 } });

    const campaign = (await api.request('POST', '/campaigns', { key, body: { name: 'moved' } })).body.data.id;
    await api.request('POST', '/rules', { key, body: { campaignId: created[2]!.success && created[2]!.data.campaignId, linkId: c, type: 'percentage', conditions: { percentage: 60 }, destinationUrl: 'https://example.com/p' } });
    await api.request('POST', '/rules', { key, body: { campaignId: campaign, type: 'percentage', conditions: { percentage: 50 }, destinationUrl: 'https://example.com/q' } });
    const each = await bulk('PATCH', {
      links: [
        { id: a, patch: { destinationUrl: 'https://example.com/a2' } },
        { id: b, patch: { campaignId: campaign, forwardQuery: false } },
        { id: c, patch: { campaignId: campaign } }, // its 60 % rule plus the campaign's 50 %: refused, alone
        { id: a, patch: {} },
        { id: b, patch: { shortCode: 'nope' } },
      ],
    });
    expect(errorCodes(each)).toEqual(['ok', 'ok', 'VALIDATION_ERROR', 'VALIDATION_ERROR', 'VALIDATION_ERROR']);
    expect(items(each)[1]!.success && items(each)[1]!).toMatchObject({ data: { campaignId: campaign, forwardQuery: false } });
    const cRow = await api.request('GET', `/links/${c}`, { key });
    expect(cRow.body.data.campaignId).not.toBe(campaign);
    expect((await api.request('GET', `/links/${a}`, { key })).body.data.destinationUrl).toBe('https://example.com/a2');
  });

  it('an item whose patch changes nothing keeps its updatedAt and queues nothing, beside items that change', async () => {
    const { key: own, workspaceId: ws } = await api.tenant();
    expect((await api.request('POST', '/webhooks', { key: own, body: { url: 'https://hooks.example.com/bulk-noop', events: ['link.updated'] } })).status).toBe(201);
    const made = items(await bulk('POST', { links: ['a', 'b', 'c'].map((n) => ({ destinationUrl: `https://example.com/n${n}`, title: 'T', tags: ['Keep'] })) }, own));
    const [a, b, c] = made.map((i) => (i.success ? i.data : undefined));
    const queued = async () => ({
      events: (await api.db.sql<{ id: string }[]>`SELECT data->>'id' AS id FROM webhook_outbox WHERE workspace_id = ${ws} AND type = 'link.updated' ORDER BY seq`).map((r) => r.id),
      generations: Object.fromEntries(
        (await api.db.sql<{ linkId: string; generation: string }[]>`SELECT link_id, generation FROM snapshot_outbox WHERE link_id IN ${api.db.sql([a.id, b.id, c.id])}`).map((r) => [r.linkId, String(r.generation)]),
      ),
    });
    const before = await queued();
    await new Promise((r) => setTimeout(r, 5));

    const shared = await bulk('PATCH', { ids: [a.id, b.id], patch: { title: 'T', tags: [' KEEP '] } }, own);
    expect(items(shared).map((i) => i.success && i.data.updatedAt)).toEqual([a.updatedAt, b.updatedAt]);
    const each = await bulk('PATCH', { links: [{ id: a.id, patch: { title: 'T' } }, { id: b.id, patch: { title: 'B2' } }, { id: c.id, patch: { destinationUrl: c.destinationUrl, enabled: true } }] }, own);
    expect(errorCodes(each)).toEqual(['ok', 'ok', 'ok']);
    const [ra, rb, rc] = items(each).map((i) => (i.success ? i.data : undefined));
    expect(ra).toEqual(a);
    expect(rc).toEqual(c);
    expect(rb).toMatchObject({ title: 'B2' });
    expect(Date.parse(rb.updatedAt)).toBeGreaterThan(Date.parse(b.updatedAt));
    const after = await queued();
    expect(after.events).toEqual([...before.events, b.id]);
    expect(after.generations[a.id]).toBe(before.generations[a.id]);
    expect(after.generations[c.id]).toBe(before.generations[c.id]);
    expect(BigInt(after.generations[b.id]!)).toBeGreaterThan(BigInt(before.generations[b.id]!));
  });

  it('deletes many; unknown, foreign, already deleted and repeated ids answer per item', async () => {
    const created = items(await bulk('POST', { links: [1, 2, 3].map((n) => ({ destinationUrl: `https://example.com/d${n}` })) }));
    const [a, b, c] = created.map((i) => (i.success ? (i.data.id as string) : ''));
    await api.request('DELETE', `/links/${c}`, { key });
    const { key: otherKey } = await api.tenant();
    const theirs = (await api.request('POST', '/links', { key: otherKey, body: { destinationUrl: 'https://example.com/theirs' } })).body.data.id;
    const res = await bulk('DELETE', { ids: [a, b, c, 'link_unknown000000000000000', theirs, a] });
    expect(res.status).toBe(200);
    expect(errorCodes(res)).toEqual(['ok', 'ok', 'ALREADY_DELETED', 'NOT_FOUND', 'NOT_FOUND', 'VALIDATION_ERROR']);
    expect(items(res)[0]).toEqual({ index: 0, success: true, data: { id: a, deleted: true } });
    expect((await api.request('GET', `/links/${b}`, { key })).status).toBe(404);
    expect((await api.request('GET', `/links/${theirs}`, { key: otherKey })).status).toBe(200);
  });

  it('concurrent bulk changes of the same links in opposite orders all pass: no deadlock turns into a 500', async () => {
    const made = items(await bulk('POST', { links: Array.from({ length: 30 }, (_, i) => ({ destinationUrl: `https://example.com/order-${i}` })) }));
    const ids = made.map((i) => (i.success ? (i.data.id as string) : ''));
    for (let round = 0; round < 5; round++) {
      const answers = await Promise.all([
        bulk('PATCH', { ids, patch: { title: `forward ${round}` } }),
        bulk('PATCH', { ids: [...ids].reverse(), patch: { title: `backward ${round}` } }),
        bulk('PATCH', { links: [...ids].reverse().map((id, i) => ({ id, patch: { title: `each ${round} ${i}` } })) }),
      ]);
      for (const res of answers) {
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        expect(errorCodes(res).every((c) => c === 'ok')).toBe(true);
      }
    }
    // Custom codes taken in opposite orders by two batches: each code goes to one of them.
    const codes = Array.from({ length: 20 }, (_, i) => `order-code-${i}`);
    const [ahead, behind] = await Promise.all([
      bulk('POST', { links: codes.map((shortCode) => ({ destinationUrl: 'https://example.com/ahead', shortCode })) }),
      bulk('POST', { links: [...codes].reverse().map((shortCode) => ({ destinationUrl: 'https://example.com/behind', shortCode })) }),
    ]);
    expect([ahead.status, behind.status]).toEqual([200, 200]);
    const won = [...errorCodes(ahead), ...errorCodes(behind)];
    expect(won.filter((c) => c === 'ok').length).toBe(20);
    expect(won.filter((c) => c === 'CONFLICT').length).toBe(20);
    const [deleteAhead, deleteBehind] = await Promise.all([bulk('DELETE', { ids }), bulk('DELETE', { ids: [...ids].reverse() })]);
    expect([deleteAhead.status, deleteBehind.status]).toEqual([200, 200]);
    expect([...errorCodes(deleteAhead), ...errorCodes(deleteBehind)].filter((c) => c === 'ok').length).toBe(30);
  });

  it.runIf(backend === 'postgres')('a bulk move decides each link\'s move from the link as locked: one deleted meanwhile fails and keeps its rules, the others move with theirs', async () => {
    const newCampaign = async () => (await api.request('POST', '/campaigns', { key, body: { name: 'bulk move' } })).body.data.id as string;
    const [a, b] = [await newCampaign(), await newCampaign()];
    const [gone, kept] = items(await bulk('POST', { links: [1, 2].map((i) => ({ destinationUrl: `https://example.com/move-${i}`, campaignId: a })) })).map((i) => (i.success ? (i.data.id as string) : ''));
    const rule = async (linkId: string) =>
      (await api.request('POST', '/rules', { key, body: { campaignId: a, linkId, type: 'geo', conditions: { countries: ['US'] }, destinationUrl: 'https://example.com/us' } })).body.data;
    const [goneRule, keptRule] = [await rule(gone!), await rule(kept!)];
    const moving = await whileLocked(
      api.db,
      (tx) => tx`SELECT id FROM campaigns WHERE id = ${b} FOR UPDATE`,
      () => bulk('PATCH', { ids: [gone, kept], patch: { campaignId: b } }),
      1,
      async () => expect((await api.request('DELETE', `/links/${gone}`, { key })).status).toBe(200),
    );
    expect(errorCodes(await moving)).toEqual(['NOT_FOUND', 'ok']);
    expect((await api.request('GET', `/rules/${goneRule.id}`, { key })).body.data).toEqual(goneRule);
    expect((await api.request('GET', `/rules/${keptRule.id}`, { key })).body.data.campaignId).toBe(b);
  });

  it('fails a malformed id or item alone in bulk updates and deletes, as a bad patch', async () => {
    const created = items(await bulk('POST', { links: [1, 2, 3].map((n) => ({ destinationUrl: `https://example.com/m${n}` })) }));
    const [a, b, c] = created.map((i) => (i.success ? (i.data.id as string) : ''));
    const perLink = await bulk('PATCH', { links: [{ id: a, patch: { title: 'x' } }, { patch: { title: 'no id' } }, { id: b, patch: { title: 'y' }, x: 1 }, 'str', null, { id: 7, patch: {} }] });
    expect(perLink.status).toBe(200);
    expect(errorCodes(perLink)).toEqual(['ok', 'VALIDATION_ERROR', 'VALIDATION_ERROR', 'VALIDATION_ERROR', 'VALIDATION_ERROR', 'VALIDATION_ERROR']);
    expect(items(perLink)[2]).toMatchObject({ index: 2, success: false, error: { details: [{ path: 'x' }] } });
    const shared = await bulk('PATCH', { ids: [b, 5, 'x'.repeat(101)], patch: { title: 'z' } });
    expect(errorCodes(shared)).toEqual(['ok', 'VALIDATION_ERROR', 'VALIDATION_ERROR']);
    expect((await api.request('GET', `/links/${b}`, { key })).body.data.title).toBe('z');
    const deleted = await bulk('DELETE', { ids: [c, 'link_nope', 123, 'x'.repeat(101), null] });
    expect(deleted.status).toBe(200);
    expect(errorCodes(deleted)).toEqual(['ok', 'NOT_FOUND', 'VALIDATION_ERROR', 'VALIDATION_ERROR', 'VALIDATION_ERROR']);
    expect((await api.request('GET', `/links/${c}`, { key })).status).toBe(404);
  });

  it('names links by short code too, as /links/{shortCode} does: the default domain\'s links (a deleted one only to delete it again)', async () => {
    const created = items(await bulk('POST', { links: ['code-a', 'code-b', 'code-c'].map((shortCode) => ({ destinationUrl: 'https://example.com/c', shortCode })) }));
    const [a, b] = created.map((i) => (i.success ? (i.data.id as string) : ''));
    const { key: other } = await api.tenant();
    await bulk('POST', { links: [{ destinationUrl: 'https://example.com/theirs', shortCode: 'code-theirs' }] }, other);
    const patched = await bulk('PATCH', { ids: ['code-a', b, 'code-b', 'code-nope', 'code-theirs'], patch: { title: 'By code' } });
    expect(errorCodes(patched)).toEqual(['ok', 'ok', 'VALIDATION_ERROR', 'NOT_FOUND', 'NOT_FOUND']);
    expect(items(patched)[0]).toMatchObject({ success: true, data: { id: a, shortCode: 'code-a', title: 'By code' } });
    expect(items(patched)[2]).toMatchObject({ error: { details: [{ path: 'id', message: 'this id appears earlier in the request' }] } });
    const perLink = await bulk('PATCH', { links: [{ id: 'code-c', patch: { title: 'C' } }] });
    expect(items(perLink)[0]).toMatchObject({ success: true, data: { shortCode: 'code-c', title: 'C' } });
    const deleted = await bulk('DELETE', { ids: ['code-a', 'code-a', 'code-theirs'] });
    expect(errorCodes(deleted)).toEqual(['ok', 'VALIDATION_ERROR', 'NOT_FOUND']);
    expect(items(deleted)[0]).toMatchObject({ success: true, data: { id: a, deleted: true } });
    // Deleting again by code or by id is ALREADY_DELETED, as DELETE /links/{shortCode} is a 410; both name one link.
    expect(errorCodes(await bulk('DELETE', { ids: ['code-a'] }))).toEqual(['ALREADY_DELETED']);
    expect(errorCodes(await bulk('DELETE', { ids: ['code-a', a] }))).toEqual(['ALREADY_DELETED', 'VALIDATION_ERROR']);
    expect((await api.request('DELETE', '/links/code-a', { key })).status).toBe(410);
    // A change by the code of a deleted link finds none, as PATCH /links/{shortCode} does.
    expect(errorCodes(await bulk('PATCH', { ids: ['code-a'], patch: { title: 'Gone' } }))).toEqual(['NOT_FOUND']);
    expect((await api.request('PATCH', '/links/code-a', { key, body: { title: 'Gone' } })).status).toBe(404);
  });

  it('hashes a password once for all the items that set it, and at most 100 different passwords a request (each a slow hash): the 101st fails alone', async () => {
    const hashesOf = async (ids: string[]) => (await api.db.sql<{ passwordHash: string | null }[]>`SELECT DISTINCT password_hash FROM links WHERE id = ANY(${ids})`).map((r) => r.passwordHash);
    const same = await bulk('POST', { links: Array.from({ length: 150 }, (_, i) => ({ destinationUrl: `https://example.com/pw-same/${i}`, password: 'one for all' })) });
    expect(errorCodes(same).every((c) => c === 'ok')).toBe(true);
    const sameIds = items(same).map((i) => (i.success ? (i.data.id as string) : ''));
    const [shared] = await hashesOf(sameIds);
    expect(await hashesOf(sameIds)).toHaveLength(1);
    expect(await verifyPassword('one for all', shared!)).toBe(true);

    const many = await bulk('POST', {
      links: [
        ...Array.from({ length: 101 }, (_, i) => ({ destinationUrl: `https://example.com/pw-many/${i}`, password: `secret-${i}` })),
        // A password already hashed for this request costs nothing more; no password, nothing.
        { destinationUrl: 'https://example.com/pw-many/again', password: 'secret-7' },
        { destinationUrl: 'https://example.com/pw-many/none' },
      ],
    });
    expect(errorCodes(many)).toEqual([...Array.from({ length: 100 }, () => 'ok'), 'VALIDATION_ERROR', 'ok', 'ok']);
    const refused = items(many)[100]!;
    expect(!refused.success && refused.error.details).toEqual([{ path: 'password', message: expect.stringContaining('at most 100 different passwords') }]);
    expect(await api.db.sql`SELECT 1 FROM links WHERE workspace_id = ${workspaceId} AND destination_url = 'https://example.com/pw-many/100'`).toHaveLength(0);

    // One password set on 150 links: one hash; set again, each link keeps it (one check, as they share it): nothing changes.
    const plain = await bulk('POST', { links: Array.from({ length: 150 }, (_, i) => ({ destinationUrl: `https://example.com/pw-patch/${i}` })) });
    const ids = items(plain).map((i) => (i.success ? (i.data.id as string) : ''));
    const patched = await bulk('PATCH', { ids, patch: { password: 'patched' } });
    expect(errorCodes(patched).every((c) => c === 'ok')).toBe(true);
    const [patchedHash] = await hashesOf(ids);
    expect(await hashesOf(ids)).toHaveLength(1);
    expect(await verifyPassword('patched', patchedHash!)).toBe(true);
    const before = items(patched).map((i) => i.success && i.data.updatedAt);
    const again = await bulk('PATCH', { ids, patch: { password: 'patched' } });
    expect(items(again).map((i) => i.success && i.data.updatedAt)).toEqual(before);
    expect(await hashesOf(ids)).toEqual([patchedHash]);
  }, 60_000);

  it('refuses a bad envelope as a whole with 400, and needs links:write', async () => {
    const tooMany = { links: Array.from({ length: 1_001 }, () => ({ destinationUrl: 'https://example.com/' })) };
    for (const [method, body] of [
      ['POST', {}],
      ['POST', { links: [] }],
      ['POST', { links: 'x' }],
      ['POST', tooMany],
      ['POST', { links: [{ destinationUrl: 'https://example.com' }], extra: 1 }],
      ['PATCH', { ids: ['link_x'] }],
      ['PATCH', { patch: { title: 'x' } }],
      ['PATCH', { ids: ['link_x'], patch: { title: 'x' }, links: [{ id: 'link_x', patch: {} }] }],
      ['PATCH', { ids: [], patch: { title: 'x' } }],
      ['DELETE', {}],
      ['DELETE', { ids: 'link_x' }],
      ['DELETE', { ids: Array.from({ length: 1_001 }, (_, i) => `link_${i}`) }],
    ] as const) {
      const res = await bulk(method, body);
      expect(res.status, `${method} ${JSON.stringify(body).slice(0, 80)}`).toBe(400);
      expect(res.body.success).toBe(false);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    }
    // The messages say what is wrong in the API's words.
    expect((await bulk('POST', tooMany)).body.error.details).toEqual([{ path: 'links', message: 'at most 1,000 items per request' }]);
    expect((await bulk('DELETE', { ids: [] })).body.error.details).toEqual([{ path: 'ids', message: 'send at least one item' }]);
    const [one] = (await bulk('POST', { links: [{ destinationUrl: 'https://example.com/one' }] })).body.data;
    const noPatch = await bulk('PATCH', { links: [{ id: one.data.id }] });
    expect(noPatch.body.data[0].error.details).toEqual([{ path: 'patch', message: 'required: the changes for this link' }]);
    // A bad patch for all ids is the envelope's: one 400, its reasons under `patch`, nothing changed.
    const badShared = await bulk('PATCH', { ids: [one.data.id, 'link_unknown'], patch: { destinationUrl: 'not a url', nope: 1 } });
    expect(badShared.status).toBe(400);
    expect(badShared.body.error.message).toBe('Invalid bulk update: the patch for all links');
    expect([...new Set(badShared.body.error.details.map((d: { path: string }) => d.path))].sort()).toEqual(['patch.destinationUrl', 'patch.nope']);
    expect((await bulk('PATCH', { ids: [one.data.id], patch: {} })).body.error.details).toEqual([{ path: 'patch', message: expect.any(String) }]);
    expect((await api.request('GET', `/links/${one.data.id}`, { key })).body.data.destinationUrl).toBe('https://example.com/one');
    expect((await api.request('DELETE', '/links/bulk', { key, rawBody: '{"ids":', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    expect((await api.request('DELETE', '/links/bulk', { key })).status).toBe(400);
    const { key: reader } = await api.tenant({ scopes: ['links:read'] });
    expect((await bulk('POST', { links: [{ destinationUrl: 'https://example.com' }] }, reader)).status).toBe(403);
    expect((await api.request('POST', '/links/bulk', { body: { links: [] } })).status).toBe(401);
    expect((await api.request('GET', '/links/bulk', { key })).status).toBe(404);
  });
});
