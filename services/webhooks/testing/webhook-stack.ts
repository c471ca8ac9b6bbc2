import { connectNatsBus } from '../../../shared/bus/nats-bus.ts';
import type { Bus } from '../../../shared/bus/bus.ts';
import { resolveSecret } from '../../../shared/config/secret.ts';
import { createApiKey, createWorkspace } from '../../../shared/db/workspaces.ts';
import { createLogger } from '../../../shared/logger.ts';
import { startChildService, type ChildService } from '../../../shared/testing/child-service.ts';
import { freePort } from '../../../shared/testing/free-port.ts';
import { startTestNatsServer, type TestNatsServer } from '../../../shared/testing/nats-server.ts';
import { createTestDatabase, type TestDatabase } from '../../../shared/testing/test-database.ts';
import { createApiApp } from '../../api/app.ts';
import { loadApiConfig } from '../../api/config.ts';
import { linkPresenter } from '../../api/link-presenter.ts';
import type { OutboxDrainer } from '../../api/outbox/outbox-drainer.ts';
import { startWebhookEventPublishing } from '../../api/outbox/webhook-outbox-publisher.ts';
import { listen, type RunningServer } from '../../api/server.ts';

const logger = createLogger('webhook-stack', 'silent');

/**
 * What the webhook tests run against: a private NATS server, a fresh Postgres
 * database, the API in-process with its webhook outbox publisher (admitting
 * loopback targets at registration), one Enterprise workspace with a key, and
 * webhook senders started as their own processes (services/webhooks/main.ts).
 */
export interface WebhookStack {
  nats: TestNatsServer;
  db: TestDatabase;
  bus: Bus;
  api: RunningServer;
  /** LINKROUTE_SECRET as the API and the senders use it. */
  secret: Buffer;
  key: string;
  workspaceId: string;
  senders: ChildService[];
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: { data: any } }>;
  /** A sender process with the stack's database, bus and secret, plus `env`; resolves once it runs. */
  startSender(env?: Record<string, string>): Promise<ChildService>;
  /** The senders' last lines, for failure messages. */
  senderLogs(): string;
  close(): Promise<void>;
}

export async function startWebhookStack(secretText: string): Promise<WebhookStack> {
  const nats = await startTestNatsServer();
  const db = await createTestDatabase('postgres');
  const secret = await resolveSecret(secretText, '/nonexistent');
  const bus = await connectNatsBus(nats.url, { replicas: 1, name: 'webhook-stack-api', logger });
  const outbox: OutboxDrainer = startWebhookEventPublishing({ sql: db.sql, bus, presentLink: linkPresenter('http://go.test'), logger });
  const api = await listen(
    createApiApp({ sql: db.sql, config: loadApiConfig({ WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' }), logger, bus, secret, webhookEvents: outbox }),
    0,
    '127.0.0.1',
  );
  const ws = await createWorkspace(db.sql, { name: 'webhooks', plan: 'enterprise' });
  const key = (await createApiKey(db.sql, { workspaceId: ws.id })).key;
  const senders: ChildService[] = [];

  return {
    nats,
    db,
    bus,
    api,
    secret,
    key,
    workspaceId: ws.id,
    senders,
    async call(method, path, body) {
      const res = await fetch(api.url + path, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      return { status: res.status, body: (await res.json()) as { data: any } };
    },
    async startSender(env = {}) {
      const sender = startChildService('services/webhooks/main.ts', {
        DATABASE_URL: db.url,
        NATS_URL: nats.url,
        LINKROUTE_SECRET: secretText,
        WEBHOOKS_PORT: String(await freePort()),
        LOG_LEVEL: 'info',
        ...env,
      }, { compiled: true });
      await sender.waitFor(/webhooks sender running/, 60_000);
      senders.push(sender);
      return sender;
    },
    senderLogs: () => senders.map((s) => s.output.split('\n').slice(-15).join('\n')).join('\n---\n'),
    async close() {
      for (const s of senders) await s.kill('SIGKILL');
      await api.close();
      await outbox.stop();
      await bus.close();
      await db.close();
      await nats.destroy();
    },
  };
}
