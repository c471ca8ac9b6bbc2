import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../shared/testing/test-database.ts';
import { createLogger } from '../../shared/logger.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';
import { linkWrites } from './link-writes.ts';
import { campaignStore } from './stores/campaign-store.ts';
import { domainStore } from './stores/domain-store.ts';
import { linkStore } from './stores/link-store.ts';
import { ruleStore } from './stores/rule-store.ts';
import { isAppError } from '../../shared/errors.ts';
import { linkCreateSchema } from '../../shared/schemas/link.ts';

type Item = { index: number; success: true; data: { id: string; destinationUrl: string } } | { index: number; success: false; error: { code: string; message: string } };

/** A code a live link holds: a generated code set to it collides. */
const TAKEN = 'partial-taken';

/**
 * A bulk create whose chunk is written in more than one statement: an item's generated
 * code collides, so it is retried in a statement of its own after the chunk's first
 * one has committed the other items, and that statement fails.
 */
describe.each(backends)('bulk create failing part-way through a chunk on %s', (backend) => {
  let api: TestApi;

  beforeAll(async () => {
    api = await startTestApi(backend, { secret: randomBytes(32) });
    const { key } = await api.tenant();
    expect((await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/holder', shortCode: TAKEN } })).status).toBe(201);
    // A link to a planned destination gets the taken code on its first insert (so it
    // collides and is retried), and its second insert fails as Postgres going away does.
    // The plan's count is kept by the first statement, which commits; the second's is undone.
    await api.db.sql.unsafe(`
      CREATE TABLE retry_fails (destination_url text PRIMARY KEY, inserts int NOT NULL DEFAULT 0);
      CREATE FUNCTION retry_fails() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE inserts int;
      BEGIN
        UPDATE retry_fails SET inserts = retry_fails.inserts + 1 WHERE destination_url = NEW.destination_url RETURNING retry_fails.inserts INTO inserts;
        IF NOT FOUND THEN RETURN NEW; END IF;
        IF inserts = 1 THEN NEW.short_code := '${TAKEN}'; RETURN NEW; END IF;
        RAISE EXCEPTION 'terminating connection' USING ERRCODE = 'admin_shutdown';
      END $$;
      CREATE TRIGGER retry_fails BEFORE INSERT ON links FOR EACH ROW EXECUTE FUNCTION retry_fails();`);
  });
  afterAll(() => api?.close());

  const planRetryFailure = (destination: string) => api.db.sql`INSERT INTO retry_fails (destination_url) VALUES (${destination})`;
  const storeBack = () => api.db.sql`DELETE FROM retry_fails`;
  const storedIds = async (workspaceId: string) => (await api.db.sql<{ id: string }[]>`SELECT id FROM links WHERE workspace_id = ${workspaceId} ORDER BY id`).map((r) => r.id);
  const createdIds = (answered: Item[]) => answered.flatMap((i) => (i.success ? [i.data.id] : [])).sort();

  it.each([
    ['the first chunk', 3],
    ['a later chunk', 550],
  ])('in %s: the links written are answered created, the item not written and those never tried fail SERVICE_UNAVAILABLE "Not created"; a retry with the Idempotency-Key replays that, creating nothing twice', async (_, failing) => {
    const { key, workspaceId } = await api.tenant();
    expect((await api.request('POST', '/webhooks', { key, body: { url: 'https://hooks.example.com/partial', events: ['link.created'] } })).status).toBe(201);
    const links = Array.from({ length: 600 }, (__, i) => ({ destinationUrl: `https://example.com/partial-${failing}/${i}` }));
    await planRetryFailure(links[failing]!.destinationUrl);
    const send = () => api.request('POST', '/links/bulk', { key, body: { links }, headers: { 'idempotency-key': `partial-${failing}-${backend}` } });

    const res = await send();
    // The failing item, and with it the chunks after its own, which were never tried.
    const notCreated = links.flatMap((__, i) => (i === failing || (failing < 500 && i >= 500) ? [i] : []));
    // Links are stored: the request cannot fail whole (its key freed for a retry to create them again).
    expect({ status: res.status, stored: (await storedIds(workspaceId)).length }).toEqual({ status: 200, stored: links.length - notCreated.length });
    const answered: Item[] = res.body.data;
    expect(answered.flatMap((i) => (i.success ? [] : [i.index]))).toEqual(notCreated);
    for (const index of notCreated) {
      const item = answered[index]!;
      expect(!item.success && [item.error.code, item.error.message]).toEqual([
        'SERVICE_UNAVAILABLE',
        expect.stringMatching(/^Not created: some of the request's items were written, then writing this one failed \(.+\); send the items that failed again$/),
      ]);
    }
    // The answer and the database agree: every link answered created is stored, once, and no other.
    expect(await storedIds(workspaceId)).toEqual(createdIds(answered));
    // Their rows queued their events (and snapshot updates) as they were written.
    const events = await api.db.sql<{ id: string }[]>`SELECT data->>'id' AS id FROM webhook_outbox WHERE workspace_id = ${workspaceId} AND type = 'link.created' ORDER BY 1`;
    expect(events.map((e) => e.id)).toEqual(createdIds(answered));

    await storeBack();
    const again = await send();
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([200, 'true']);
    expect(again.body).toEqual(res.body);
    expect(await storedIds(workspaceId)).toEqual(createdIds(answered));

    // As told, the failed items sent again are created: each link exists once.
    const resent = await api.request('POST', '/links/bulk', { key, body: { links: notCreated.map((i) => links[i]) } });
    expect((resent.body.data as Item[]).every((i) => i.success)).toBe(true);
    const destinations = await api.db.sql<{ destinationUrl: string }[]>`SELECT destination_url FROM links WHERE workspace_id = ${workspaceId} ORDER BY destination_url`;
    expect(destinations.map((d) => d.destinationUrl)).toEqual(links.map((l) => l.destinationUrl).sort());
  });

  it('with nothing written before the retry fails, the request fails whole (503), and a retry with the Idempotency-Key creates each link once', async () => {
    const { key, workspaceId } = await api.tenant();
    const links = [{ destinationUrl: 'https://example.com/partial-none/0', shortCode: TAKEN }, { destinationUrl: 'https://example.com/partial-none/1' }];
    await planRetryFailure(links[1]!.destinationUrl);
    const send = () => api.request('POST', '/links/bulk', { key, body: { links }, headers: { 'idempotency-key': `partial-none-${backend}` } });
    const res = await send();
    expect([res.status, res.body.error?.code]).toEqual([503, 'SERVICE_UNAVAILABLE']);
    expect(await storedIds(workspaceId)).toEqual([]);
    await storeBack();
    const again = await send();
    expect([again.status, again.headers.get('idempotent-replayed')]).toEqual([200, null]);
    expect((again.body.data as Item[]).map((i) => (i.success ? 'ok' : i.error.code))).toEqual(['CONFLICT', 'ok']);
    expect(await storedIds(workspaceId)).toEqual(createdIds(again.body.data));
  });

  it('publishes the links of a chunk that failed part-way, as of any chunk that stored links', async () => {
    const { workspaceId } = await api.tenant();
    const sql = api.db.sql;
    const writes = linkWrites({ links: linkStore(sql), campaigns: campaignStore(sql), domains: domainStore(sql, 'http://go.test'), rules: ruleStore(sql), logger: createLogger('test', 'silent') });
    const inputs = [0, 1, 2, 3].map((i) => linkCreateSchema.parse({ destinationUrl: `https://example.com/partial-published/${i}` }));
    await planRetryFailure('https://example.com/partial-published/1');
    let publishes = 0;
    const results = await writes.create(workspaceId, inputs, { chunk: 2, written: () => publishes++ });
    await storeBack();
    expect(results.map((r) => (isAppError(r) ? r.code : 'ok'))).toEqual(['ok', 'SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE', 'SERVICE_UNAVAILABLE']);
    expect(publishes).toBe(1);
  });
});
