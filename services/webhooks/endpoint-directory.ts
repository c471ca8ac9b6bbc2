import type { Sql } from '../../shared/db/postgres.ts';
import { errorFields, type Logger } from '../../shared/logger.ts';
import type { WebhookEventType } from '../../shared/schemas/webhook.ts';
import { openSigningSecret } from '../../shared/webhooks/signing-secret.ts';
import { payloadSigner, type PayloadSigner } from './payload-signer.ts';

export interface Endpoint {
  id: string;
  workspaceId: string;
  url: string;
  events: ReadonlySet<string>;
  enabled: boolean;
  /**
   * Signs with the endpoint's secret (Standard Webhooks). Null: its secret cannot be
   * unsealed here (sealed under another LINKROUTE_SECRET than this sender's): the endpoint
   * is live all the same, so its deliveries are stored as for any other, but this sender
   * never claims or attempts them, and leaves them to senders that can sign.
   */
  signer: PayloadSigner | null;
}

interface EndpointRow {
  id: string;
  workspaceId: string;
  url: string;
  events: WebhookEventType[];
  enabled: boolean;
  sealedSecret: string;
}

export interface EndpointDirectory {
  /** The endpoint, enabled or not; undefined once deleted (or never known). */
  get(id: string): Endpoint | undefined;
  /** Enabled endpoints of the workspace subscribed to the event type. */
  subscribers(workspaceId: string, type: string): Endpoint[];
  /** Whether any enabled endpoint anywhere subscribes to the type. */
  anySubscribes(type: string): boolean;
  /** Reads the endpoints again now (on its timer, or after a change). */
  refresh(): Promise<void>;
  /** Resolves once the endpoints have been read by a read that started at `since` (epoch ms) or later. */
  readSince(since: number): Promise<void>;
  /** Epoch ms when the read the directory now holds started (it knows every endpoint created before). */
  lastReadStartedAt(): number;
  /** Ids of the live endpoints whose secret this sender cannot unseal (Endpoint.signer null), as of the last read. */
  unsigned(): readonly string[];
  /**
   * Endpoints are live and not one's secret opens here: this sender's LINKROUTE_SECRET is
   * not the API's (one endpoint's secret that does not open, beside others that do, is that
   * row's fault, not the sender's).
   */
  opensNone(): boolean;
  stop(): void;
}

/**
 * Every live endpoint, in memory, read again every `refreshMs` (a change made through
 * the API reaches every sender within that), so fan-out costs no query per event.
 * Secrets are unsealed once per endpoint and secret; one that cannot be is said once (an
 * error: this sender's LINKROUTE_SECRET is not the API's) and its endpoint kept, unsigned,
 * never taken for deleted: a sender giving up such an endpoint's deliveries as "endpoint
 * deleted", or making none for its events, would lose them for every sender.
 */
export async function loadEndpointDirectory(deps: { sql: Sql; secret: Buffer; logger: Logger; refreshMs?: number }): Promise<EndpointDirectory> {
  const { sql, secret, logger } = deps;
  let byId = new Map<string, Endpoint>();
  let byWorkspace = new Map<string, Endpoint[]>();
  let signers = new Map<string, PayloadSigner>();
  /** Sealed secrets found not to open here, already said. */
  let unopened = new Set<string>();
  let unsigned: string[] = [];
  let refreshing: Promise<void> | null = null;
  let refreshingSince = 0;
  let lastReadStartedAt = 0;

  async function load(): Promise<void> {
    const startedAt = Date.now();
    const rows = await sql<EndpointRow[]>`
      SELECT id, workspace_id, url, events, enabled, sealed_secret FROM webhook_endpoints WHERE deleted_at IS NULL`;
    const nextById = new Map<string, Endpoint>();
    const nextByWorkspace = new Map<string, Endpoint[]>();
    const nextSigners = new Map<string, PayloadSigner>();
    const nextUnopened = new Set<string>();
    for (const row of rows) {
      let signer = signers.get(row.sealedSecret) ?? null;
      if (!signer && !unopened.has(row.sealedSecret)) {
        try {
          signer = payloadSigner(openSigningSecret(secret, row.sealedSecret));
        } catch (err) {
          logger.error(
            'webhook endpoint secret cannot be unsealed: is LINKROUTE_SECRET the API\'s? Its deliveries are left to senders that can sign them',
            { endpointId: row.id, ...errorFields(err) },
          );
        }
      }
      if (signer) nextSigners.set(row.sealedSecret, signer);
      else nextUnopened.add(row.sealedSecret);
      const endpoint: Endpoint = { id: row.id, workspaceId: row.workspaceId, url: row.url, events: new Set(row.events), enabled: row.enabled, signer };
      nextById.set(endpoint.id, endpoint);
      const list = nextByWorkspace.get(endpoint.workspaceId);
      if (list) list.push(endpoint);
      else nextByWorkspace.set(endpoint.workspaceId, [endpoint]);
    }
    byId = nextById;
    byWorkspace = nextByWorkspace;
    signers = nextSigners;
    unopened = nextUnopened;
    unsigned = [...nextById.values()].filter((e) => e.signer === null).map((e) => e.id);
    lastReadStartedAt = startedAt;
  }

  function refresh(): Promise<void> {
    if (!refreshing) {
      refreshingSince = Date.now();
      refreshing = load().finally(() => (refreshing = null));
    }
    return refreshing;
  }
  await refresh();
  const timer = setInterval(() => {
    refresh().catch((err) => logger.warn('webhook endpoints not refreshed; keeping the last known', errorFields(err)));
  }, deps.refreshMs ?? 1_000);
  timer.unref();

  return {
    get: (id) => byId.get(id),
    subscribers: (workspaceId, type) => (byWorkspace.get(workspaceId) ?? []).filter((e) => e.enabled && e.events.has(type)),
    anySubscribes(type) {
      for (const e of byId.values()) if (e.enabled && e.events.has(type)) return true;
      return false;
    },
    refresh,
    async readSince(since) {
      if (lastReadStartedAt >= since) return;
      // A read under way that started early enough will do; else one more after it.
      if (refreshing && refreshingSince >= since) return refreshing;
      // Waits for it to settle only: its failure is reported where it was started.
      if (refreshing) await Promise.allSettled([refreshing]);
      if (lastReadStartedAt < since) await refresh();
    },
    lastReadStartedAt: () => lastReadStartedAt,
    unsigned: () => unsigned,
    opensNone: () => unsigned.length > 0 && unsigned.length === byId.size,
    stop: () => clearInterval(timer),
  };
}
