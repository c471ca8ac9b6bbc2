/**
 * Every service that connects to NATS (API, redirector, ingester, webhooks sender), each
 * its own process configured only by environment as in production, against a NATS that
 * requires credentials: user and password in NATS_URL, then a token over TLS with the
 * CA in NATS_TLS_CA. A client without them is refused; ours connect, and a link created
 * through the API redirects and its clicks are stored.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClickHouse } from '../shared/clickhouse/clickhouse-client.ts';
import { createApiKey, createWorkspace } from '../shared/db/workspaces.ts';
import { startChildService, type ChildService } from '../shared/testing/child-service.ts';
import { freePort } from '../shared/testing/free-port.ts';
import { startTestNatsServer, type TestNatsServer } from '../shared/testing/nats-server.ts';
import { createSelfSignedCert, type SelfSignedCert } from '../shared/testing/self-signed-cert.ts';
import { createTestClickHouse, type TestClickHouse } from '../shared/testing/test-clickhouse.ts';
import { createTestDatabase, type TestDatabase } from '../shared/testing/test-database.ts';
import { eventually } from './process-stack.ts';

const CLICKS = 5;

interface Case {
  name: string;
  serverConfig: (cert: SelfSignedCert) => string;
  natsUrl: (port: number) => string;
  env: (cert: SelfSignedCert) => Record<string, string>;
}

const cases: Case[] = [
  {
    name: 'user and password in NATS_URL',
    serverConfig: () => 'authorization { users = [ { user: "linkroute", password: "pw/with:@chars" } ] }',
    natsUrl: (port) => `nats://linkroute:${encodeURIComponent('pw/with:@chars')}@127.0.0.1:${port}`,
    env: () => ({}),
  },
  {
    name: 'a token over TLS, the CA in NATS_TLS_CA',
    serverConfig: (cert) => `tls { cert_file: "${cert.certFile}", key_file: "${cert.keyFile}" }\nauthorization { token: "linkroute-t0ken" }`,
    // By name: the certificate is checked against it.
    natsUrl: (port) => `tls://linkroute-t0ken@localhost:${port}`,
    env: (cert) => ({ NATS_TLS_CA: cert.certFile }),
  },
];

describe.each(cases)('services on NATS with $name', (c) => {
  let cert: SelfSignedCert;
  let nats: TestNatsServer;
  let db: TestDatabase;
  let ch: TestClickHouse;
  let dataDir: string;
  const children: ChildService[] = [];
  const ports = { api: 0, redirect: 0, redirectAdmin: 0, ingest: 0, webhooks: 0 };
  const output = () => children.map((child) => child.output.split('\n').slice(-15).join('\n')).join('\n---\n');

  beforeAll(async () => {
    cert = await createSelfSignedCert();
    [nats, db, ch, dataDir, ports.api, ports.redirect, ports.redirectAdmin, ports.ingest, ports.webhooks] = await Promise.all([
      startTestNatsServer({ config: c.serverConfig(cert) }),
      createTestDatabase('postgres'),
      createTestClickHouse(),
      mkdtemp(join(tmpdir(), 'linkroute-nats-auth-')),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
      freePort(),
    ]);
    const common = { NATS_URL: c.natsUrl(nats.port), ...c.env(cert), HOST: '127.0.0.1', DATA_DIR: dataDir, LINKROUTE_SECRET: randomBytes(32).toString('hex') };
    children.push(
      startChildService('services/api/main.ts', { ...common, DATABASE_URL: db.url, CLICKHOUSE_URL: ch.url, API_PORT: String(ports.api), ADMIN_PORT: '0' }, { compiled: true }),
      startChildService('services/redirector/main.ts', { ...common, REDIRECT_PORT: String(ports.redirect), ADMIN_PORT: String(ports.redirectAdmin) }, { compiled: true }),
      startChildService('services/ingester/main.ts', { ...common, CLICKHOUSE_URL: ch.url, INGEST_PORT: String(ports.ingest), INGEST_LINGER_MS: '100' }, { compiled: true }),
      startChildService('services/webhooks/main.ts', { ...common, DATABASE_URL: db.url, WEBHOOKS_PORT: String(ports.webhooks) }, { compiled: true }),
    );
  }, 60_000);

  afterAll(async () => {
    await Promise.all(children.map((child) => child.kill()));
    await db?.close();
    await ch?.close();
    await nats?.destroy();
    await cert?.remove();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('refuses a client without credentials', async () => {
    // Over TLS with the right CA, so what refuses it is the missing token.
    const options = c.natsUrl(0).startsWith('tls') ? { tls: { caFile: cert.certFile } } : {};
    await expect(connect({ servers: `localhost:${nats.port}`, reconnect: false, ...options })).rejects.toThrow(/authorization/i);
  });

  it('connects every service, and a click goes from the API through the redirector into ClickHouse', async () => {
    // The redirector's /ready is on its admin port.
    for (const [name, port] of Object.entries(ports).filter(([name]) => name !== 'redirect')) {
      await eventually(async () => {
        const res = await fetch(`http://127.0.0.1:${port}/ready`);
        const body = (await res.json()) as { data?: { checks?: Record<string, string> }; checks?: Record<string, string> };
        expect(res.status, `${name} /ready`).toBe(200);
        expect((body.data?.checks ?? body.checks)?.nats, `${name} sees NATS`).toBe('ok');
      }, 60_000).catch((err: Error) => {
        throw new Error(`${err.message}\n${output()}`);
      });
    }
    const workspace = await createWorkspace(db.sql, { name: 'nats-auth', plan: 'enterprise' });
    const key = await createApiKey(db.sql, { workspaceId: workspace.id });
    const created = await fetch(`http://127.0.0.1:${ports.api}/links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ destinationUrl: 'https://example.com/landing', shortCode: 'nats-auth' }),
    });
    expect(created.status).toBe(201);
    const linkId = ((await created.json()) as { data: { id: string } }).data.id;
    await eventually(async () => {
      const res = await fetch(`http://127.0.0.1:${ports.redirect}/nats-auth`, { method: 'HEAD', redirect: 'manual' });
      expect(res.status).toBe(302);
    }, 30_000, 50);
    for (let i = 0; i < CLICKS; i++) {
      const res = await fetch(`http://127.0.0.1:${ports.redirect}/nats-auth`, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/130.0' } });
      expect(res.headers.get('location')).toBe('https://example.com/landing');
    }
    const clickhouse = connectClickHouse(ch.url);
    try {
      await eventually(async () => {
        const rows = await (await clickhouse.query({ query: 'SELECT count() AS n FROM events WHERE link_id = {l:String}', query_params: { l: linkId }, format: 'JSONEachRow' })).json<{ n: string }>();
        expect(Number(rows[0]!.n)).toBe(CLICKS);
      }, 60_000);
    } finally {
      await clickhouse.close();
    }
  }, 180_000);
});
