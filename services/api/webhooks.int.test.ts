import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backends } from '../../shared/testing/test-database.ts';
import { webhookCreatedSchema, webhookSchema } from '../../shared/schemas/webhook.ts';
import { openSigningSecret } from '../../shared/webhooks/signing-secret.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';

/** The management side of webhooks (delivery is tested with the sender, services/webhooks). */
describe.each(backends)('webhook endpoints API on %s', (backend) => {
  let api: TestApi;
  let key: string;
  const secret = randomBytes(32);

  beforeAll(async () => {
    api = await startTestApi(backend, { secret });
    ({ key } = await api.tenant());
  });
  afterAll(() => api?.close());

  const create = (body: unknown, k = key) => api.request('POST', '/webhooks', { key: k, body });

  it('creates an endpoint and shows its signing secret once, sealed at rest', async () => {
    const res = await create({ url: 'https://hooks.example.com/linkroute', events: ['link.created', 'link.deleted', 'link.created'], description: 'CRM sync' });
    expect(res.status).toBe(201);
    const created = webhookCreatedSchema.strict().parse(res.body.data);
    expect(created).toMatchObject({ url: 'https://hooks.example.com/linkroute', events: ['link.created', 'link.deleted'], enabled: true, status: 'active', disabledReason: null, failingSince: null });
    expect(created.id).toMatch(/^wh_/);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const read = await api.request('GET', `/webhooks/${created.id}`, { key });
    expect(webhookSchema.strict().parse(read.body.data).id).toBe(created.id);
    expect(read.body.data.secret).toBeUndefined();
    const [row] = await api.db.sql<{ sealedSecret: string }[]>`SELECT sealed_secret FROM webhook_endpoints WHERE id = ${created.id}`;
    expect(row!.sealedSecret).not.toContain(created.secret.slice(6, 20));
    expect(openSigningSecret(secret, row!.sealedSecret)).toBe(created.secret);
  });

  it('lists, updates (re-enabling clears a failure streak), deletes; another workspace sees none of it', async () => {
    const { key: own } = await api.tenant();
    const a = (await create({ url: 'https://a.example.com/hook', events: ['link.created'] }, own)).body.data;
    const b = (await create({ url: 'https://b.example.com/hook', events: ['conversion.created', 'link.clicked'] }, own)).body.data;
    const list = await api.request('GET', '/webhooks', { key: own });
    expect(list.body.data.map((w: { id: string }) => w.id)).toEqual([b.id, a.id]);
    expect(list.body.pagination).toEqual({ page: 1, limit: 20, total: 2, totalPages: 1 });

    const off = await api.request('PATCH', `/webhooks/${a.id}`, { key: own, body: { enabled: false } });
    expect(off.body.data).toMatchObject({ enabled: false, status: 'disabled', disabledReason: 'manual' });
    expect((await api.request('GET', '/webhooks?enabled=false', { key: own })).body.data.map((w: { id: string }) => w.id)).toEqual([a.id]);
    await api.db.sql`UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing', failing_since = now() - interval '25 hours' WHERE id = ${b.id}`;
    expect((await api.request('GET', `/webhooks/${b.id}`, { key: own })).body.data).toMatchObject({ status: 'disabled', disabledReason: 'failing' });
    const on = await api.request('PATCH', `/webhooks/${b.id}`, { key: own, body: { enabled: true, events: ['link.updated'], url: 'https://b2.example.com/hook' } });
    expect(on.body.data).toMatchObject({ enabled: true, status: 'active', disabledReason: null, failingSince: null, events: ['link.updated'], url: 'https://b2.example.com/hook' });

    expect((await api.request('GET', `/webhooks/${a.id}`, { key })).status).toBe(404);
    expect((await api.request('PATCH', `/webhooks/${a.id}`, { key, body: { enabled: true } })).status).toBe(404);
    expect((await api.request('DELETE', `/webhooks/${a.id}`, { key })).status).toBe(404);
    expect((await api.request('GET', `/webhooks/${a.id}/deliveries`, { key })).status).toBe(404);
    expect((await api.request('POST', `/webhooks/${a.id}/test`, { key })).status).toBe(404);
    // A delivery of this workspace's endpoint: another workspace cannot read or resend it.
    await api.db.sql`INSERT INTO webhook_events (id, workspace_id, type, body) VALUES ('evt_tenant', 'ws_x', 'link.created', '{"type":"link.created"}')`;
    await api.db.sql`INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, status) VALUES ('dlv_tenant', ${b.id}, 'evt_tenant', 'link.created', 'failed')`;
    for (const [method, path] of [['GET', `/webhooks/${b.id}/deliveries/dlv_tenant`], ['POST', `/webhooks/${b.id}/deliveries/dlv_tenant/retry`]] as const) {
      expect((await api.request(method, path, { key })).status, `${method} ${path}`).toBe(404);
    }
    expect((await api.request('GET', `/webhooks/${b.id}/deliveries/dlv_tenant`, { key: own })).body.data).toMatchObject({ id: 'dlv_tenant', status: 'failed', payload: '{"type":"link.created"}' });

    expect((await api.request('DELETE', `/webhooks/${a.id}`, { key: own })).body).toEqual({ success: true, data: { id: a.id, deleted: true } });
    expect((await api.request('DELETE', `/webhooks/${a.id}`, { key: own })).status).toBe(404);
    expect((await api.request('GET', '/webhooks', { key: own })).body.data.map((w: { id: string }) => w.id)).toEqual([b.id]);
  });

  it('an endpoint whose run of failures ended in a pause longer than the retries make is active again, as the sender treats it', async () => {
    const { key: own } = await api.tenant();
    const paused = (await create({ url: 'https://paused.example.com/hook', events: ['link.created'] }, own)).body.data;
    const failing = (await create({ url: 'https://failing.example.com/hook', events: ['link.created'] }, own)).body.data;
    // As a sender leaves them: a run begun 25 h ago, its last failure then (a pause since,
    // longer than the 6 h wait plus a claim), and one whose last failure was a minute ago.
    await api.db.sql`UPDATE webhook_endpoints SET failing_since = now() - interval '25 hours', last_failure_at = now() - interval '25 hours' WHERE id = ${paused.id}`;
    await api.db.sql`UPDATE webhook_endpoints SET failing_since = now() - interval '5 hours', last_failure_at = now() - interval '1 minute' WHERE id = ${failing.id}`;
    const read = async (id: string) => {
      const { status, failingSince } = (await api.request('GET', `/webhooks/${id}`, { key: own })).body.data;
      return { status, failingSince: failingSince === null ? null : Date.now() - Date.parse(failingSince) > 4 * 3600_000 };
    };
    expect(await read(paused.id)).toEqual({ status: 'active', failingSince: null });
    expect(await read(failing.id)).toEqual({ status: 'failing', failingSince: true });
    const listed = (await api.request('GET', '/webhooks', { key: own })).body.data.map((w: { id: string; status: string }) => [w.id, w.status]);
    expect(new Map(listed)).toEqual(new Map([[paused.id, 'active'], [failing.id, 'failing']]));
  });

  it('a resend by hand makes a finished delivery due and unclaimed, whatever claim token it still carries', async () => {
    const { key: own } = await api.tenant();
    const hook = (await create({ url: 'https://resend.example.com/hook', events: ['link.created'] }, own)).body.data;
    const [ws] = await api.db.sql<{ workspaceId: string }[]>`SELECT workspace_id FROM webhook_endpoints WHERE id = ${hook.id}`;
    await api.db.sql`INSERT INTO webhook_events (id, workspace_id, type, body) VALUES ('evt_resend', ${ws!.workspaceId}, 'link.created', '{"type":"link.created"}')`;
    // Given up by a sender of the previous release, which cleared no token: its holder's
    // late outcome must not decide the resend.
    await api.db.sql`
      INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, status, attempts, claim_token, next_attempt_at)
      VALUES ('dlv_resend', ${hook.id}, 'evt_resend', 'link.created', 'failed', 3, 'token-of-an-old-holder', NULL)`;
    const resent = await api.request('POST', `/webhooks/${hook.id}/deliveries/dlv_resend/retry`, { key: own });
    expect(resent.status).toBe(202);
    const [row] = await api.db.sql<{ status: string; claimToken: string | null; due: boolean }[]>`
      SELECT status, claim_token, next_attempt_at <= now() AS due FROM webhook_deliveries WHERE id = 'dlv_resend'`;
    expect(row).toEqual({ status: 'pending', claimToken: null, due: true });
  });

  it('queues a test event (202) and lists deliveries, paginated', async () => {
    const hook = (await create({ url: 'https://c.example.com/hook', events: ['link.updated'] })).body.data;
    const test = await api.request('POST', `/webhooks/${hook.id}/test`, { key });
    expect(test.status).toBe(202);
    expect(test.body.data.eventId).toMatch(/^evt_/);
    const [queued] = await api.db.sql<{ type: string; endpointId: string }[]>`SELECT type, endpoint_id FROM webhook_outbox WHERE event_id = ${test.body.data.eventId}`;
    expect(queued).toEqual({ type: 'webhook.test', endpointId: hook.id });
    const deliveries = await api.request('GET', `/webhooks/${hook.id}/deliveries?status=pending`, { key });
    expect(deliveries.status).toBe(200);
    expect(deliveries.body).toEqual({ success: true, data: [], pagination: { page: 1, limit: 20, total: 0, totalPages: 0 } });
  });

  it('queues link events in the change\'s transaction, only those an enabled endpoint of the workspace subscribes to', async () => {
    const { key: quiet, workspaceId: quietWs } = await api.tenant();
    await api.request('POST', '/links', { key: quiet, body: { destinationUrl: 'https://example.com/quiet' } });
    const off = (await create({ url: 'https://d.example.com/off', events: ['link.created'] }, quiet)).body.data;
    await api.request('PATCH', `/webhooks/${off.id}`, { key: quiet, body: { enabled: false } });
    await create({ url: 'https://d.example.com/conversions', events: ['conversion.created'] }, quiet);
    await api.request('POST', '/links', { key: quiet, body: { destinationUrl: 'https://example.com/quiet-2' } });
    expect((await api.db.sql`SELECT 1 FROM webhook_outbox WHERE workspace_id = ${quietWs}`).length).toBe(0);

    const { key: loud, workspaceId: loudWs } = await api.tenant();
    await create({ url: 'https://d.example.com/hook', events: ['link.created', 'link.updated', 'link.deleted'] }, loud);
    const link = (await api.request('POST', '/links', { key: loud, body: { destinationUrl: 'https://example.com/loud' } })).body.data;
    await api.request('PATCH', `/links/${link.id}`, { key: loud, body: { title: 'x' } });
    await api.request('POST', '/links/bulk', { key: loud, body: { links: [{ destinationUrl: 'https://example.com/b1' }, { destinationUrl: 'https://example.com/b2' }] } });
    await api.request('DELETE', `/links/${link.id}`, { key: loud });
    const types = await api.db.sql<{ type: string }[]>`SELECT type FROM webhook_outbox WHERE workspace_id = ${loudWs} ORDER BY seq`;
    expect(types.map((t) => t.type)).toEqual(['link.created', 'link.updated', 'link.created', 'link.created', 'link.deleted']);
  });

  it('refuses local, private and metadata targets, and bad bodies, with 400 naming the field', async () => {
    for (const url of ['http://localhost:8080/hook', 'http://127.0.0.1/hook', 'http://10.0.0.5/hook', 'http://169.254.169.254/latest/meta-data', 'http://[::1]/hook', 'http://[fd00::1]/hook', 'http://192.168.1.1/']) {
      const res = await create({ url, events: ['link.created'] });
      expect(res.status, url).toBe(400);
      expect(res.body.error.details[0].path).toBe('url');
    }
    // Spellings of the same places: a root dot, an IPv4-compatible or -mapped IPv6 address, a decimal IPv4 address.
    const spellings: Array<[string, string]> = [
      ['http://localhost./hook', 'a local host name'],
      ['http://api.localhost/hook', 'a local host name'],
      ['http://[::127.0.0.1]/hook', 'IPv4-compatible'],
      ['http://[::ffff:169.254.169.254]/latest', 'link-local or metadata'],
      ['http://2130706433/hook', 'loopback'],
      ['http://0/hook', 'unspecified'],
    ];
    for (const [url, reason] of spellings) {
      const res = await create({ url, events: ['link.created'] });
      expect(res.status, url).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details, url).toEqual([{ path: 'url', message: expect.stringContaining(`must be a public address, not ${reason}`) }]);
    }
    // Other names are not resolved when registered (DNS can change): they are checked at each send.
    expect((await create({ url: 'http://intranet.example.com/hook', events: ['link.created'] })).status).toBe(201);
    const bad: Array<[unknown, string]> = [
      [{ url: 'ftp://example.com', events: ['link.created'] }, 'url'],
      [{ url: 'https://example.com' }, 'events'],
      [{ url: 'https://example.com', events: [] }, 'events'],
      [{ url: 'https://example.com', events: ['link.exploded'] }, 'events.0'],
      [{ url: 'https://example.com', events: ['webhook.test'] }, 'events.0'],
      [{ url: 'https://example.com', events: ['link.created'], secret: 'mine' }, 'secret'],
      [{ url: 'https://example.com', events: ['link.created'], description: 'x'.repeat(501) }, 'description'],
    ];
    for (const [body, path] of bad) {
      const res = await create(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { path: string }) => d.path)).toContain(path);
    }
    const hook = (await create({ url: 'https://e.example.com/hook', events: ['link.created'] })).body.data;
    for (const body of [{}, { enabled: 'yes' }, { url: 'http://127.0.0.1/' }, { events: [] }, { id: 'wh_x' }]) {
      const res = await api.request('PATCH', `/webhooks/${hook.id}`, { key, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
    for (const query of ['limit=0', 'page=-1', 'status=lost', 'x=1']) {
      expect((await api.request('GET', `/webhooks/${hook.id}/deliveries?${query}`, { key })).status, query).toBe(400);
    }
    expect((await api.request('GET', '/webhooks?enabled=maybe', { key })).status).toBe(400);
    const { key: linksOnly } = await api.tenant({ scopes: ['links:read', 'links:write'] });
    expect((await api.request('GET', '/webhooks', { key: linksOnly })).status).toBe(403);
    expect((await api.request('GET', '/webhooks')).status).toBe(401);
  });

  it('refuses credentials in the URL on create and update (400 naming url and the signature); an endpoint stored with them still works', async () => {
    const { key: own } = await api.tenant();
    for (const url of ['https://user:secret@hooks.example.com/x', 'https://user@hooks.example.com/x', 'https://:secret@hooks.example.com/x']) {
      const res = await create({ url, events: ['link.created'] }, own);
      expect(res.status, url).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details).toEqual([{ path: 'url', message: expect.stringMatching(/credentials.*Standard Webhooks signature/) }]);
    }
    const hook = (await create({ url: 'https://hooks.example.com/x', events: ['link.created'] }, own)).body.data;
    const patched = await api.request('PATCH', `/webhooks/${hook.id}`, { key: own, body: { url: 'https://user:secret@hooks.example.com/x' } });
    expect(patched.status).toBe(400);
    expect(patched.body.error.details).toEqual([{ path: 'url', message: expect.stringContaining('credentials') }]);
    const listed = await api.request('GET', '/webhooks', { key: own });
    expect(JSON.stringify(listed.body)).not.toContain('secret@');

    // Stored before this check: read, updated (its url untouched), tested as before.
    await api.db.sql`UPDATE webhook_endpoints SET url = 'https://user:secret@old.example.com/x' WHERE id = ${hook.id}`;
    expect((await api.request('GET', `/webhooks/${hook.id}`, { key: own })).status).toBe(200);
    const renamed = await api.request('PATCH', `/webhooks/${hook.id}`, { key: own, body: { description: 'old one', events: ['link.updated'] } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data).toMatchObject({ description: 'old one', events: ['link.updated'] });
    expect((await api.request('POST', `/webhooks/${hook.id}/test`, { key: own })).status).toBe(202);
    const fixed = await api.request('PATCH', `/webhooks/${hook.id}`, { key: own, body: { url: 'https://old.example.com/x' } });
    expect(fixed.body.data.url).toBe('https://old.example.com/x');

    // The reference says so, where a client reads the field.
    const document = (await api.request('GET', '/openapi.json')).body;
    for (const name of ['WebhookCreate', 'WebhookUpdate']) {
      expect(document.components.schemas[name].properties.url.description, name).toMatch(/No credentials \(user:password@\).*Standard Webhooks signature/);
    }
  });

  it('a disabled endpoint is not sent a test event: 409 WEBHOOK_DISABLED saying to enable it, nothing queued', async () => {
    const { key: own, workspaceId } = await api.tenant();
    const hook = (await create({ url: 'https://f.example.com/hook', events: ['link.created'] }, own)).body.data;
    const queued = async () => (await api.db.sql`SELECT 1 FROM webhook_outbox WHERE workspace_id = ${workspaceId} AND type = 'webhook.test'`).length;

    await api.request('PATCH', `/webhooks/${hook.id}`, { key: own, body: { enabled: false } });
    const manual = await api.request('POST', `/webhooks/${hook.id}/test`, { key: own });
    expect(manual.status).toBe(409);
    expect(manual.body).toEqual({
      success: false,
      error: { code: 'WEBHOOK_DISABLED', message: `Webhook endpoint is disabled (disabled by PATCH enabled: false) and gets no deliveries, tests included: enable it first with PATCH /webhooks/${hook.id} {"enabled": true}` },
    });
    await api.db.sql`UPDATE webhook_endpoints SET disabled_reason = 'failing', failing_since = now() - interval '25 hours' WHERE id = ${hook.id}`;
    const failing = await api.request('POST', `/webhooks/${hook.id}/test`, { key: own });
    expect(failing.status).toBe(409);
    expect(failing.body.error.message).toContain('its deliveries failed for 24 h');
    expect(await queued()).toBe(0);

    await api.request('PATCH', `/webhooks/${hook.id}`, { key: own, body: { enabled: true } });
    expect((await api.request('POST', `/webhooks/${hook.id}/test`, { key: own })).status).toBe(202);
    expect(await queued()).toBe(1);
  });
});

describe.each(backends)('webhook endpoints API allowing private targets (WEBHOOKS_ALLOW_PRIVATE_TARGETS) on %s', (backend) => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi(backend, { secret: randomBytes(32), env: { WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' } });
  });
  afterAll(() => api?.close());

  it('takes loopback, private and local targets, but never credentials', async () => {
    const { key } = await api.tenant();
    for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://[::1]/hook', 'http://10.0.0.5/hook']) {
      expect((await api.request('POST', '/webhooks', { key, body: { url, events: ['link.created'] } })).status, url).toBe(201);
    }
    const res = await api.request('POST', '/webhooks', { key, body: { url: 'http://user:secret@127.0.0.1:8080/hook', events: ['link.created'] } });
    expect(res.status).toBe(400);
    expect(res.body.error.details[0].path).toBe('url');
  });
});
