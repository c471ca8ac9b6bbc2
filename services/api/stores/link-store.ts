import postgres from 'postgres';
import { AppError, isAppError } from '../../../shared/errors.ts';
import { newId, randomBase62 } from '../../../shared/ids.ts';
import { likeContains } from '../../../shared/db/rows.ts';
import { retryingConcurrencyFailures, type Sql } from '../../../shared/db/postgres.ts';
import { GENERATED_SHORT_CODE_LENGTH, reservedShortCodes } from '../../../shared/schemas/short-code.ts';
import { storedForwardQuery, type Link, type LinkCreate, type LinkUpdate, type StoredForwardQuery } from '../../../shared/schemas/link.ts';

/** The domain a short code is looked up on: a custom domain by hostname or id, else the default domain. */
export interface LinkDomain {
  hostname?: string | undefined;
  domainId?: string | undefined;
}

export interface LinkRow {
  id: string;
  workspaceId: string;
  campaignId: string;
  domainId: string | null;
  domainHostname: string | null;
  shortCode: string;
  destinationUrl: string;
  defaultDestination: string | null;
  title: string;
  description: string;
  enabled: boolean;
  passwordHash: string | null;
  expiresAt: Date | null;
  expiredUrl: string | null;
  clicksLimit: number | null;
  redirectBehavior: Link['redirectBehavior'];
  deepLinkEnabled: boolean;
  deepLinkIos: string | null;
  deepLinkAndroid: string | null;
  deepLinkFallbackUrl: string | null;
  conversionTracking: boolean;
  trackingType: Link['trackingType'];
  tags: string[];
  forwardQuery: StoredForwardQuery;
  createdAt: Date;
  updatedAt: Date;
  deletedAt: Date | null;
}

/**
 * Everything of a link the store writes: the validated input (its password is not
 * written), its campaign resolved and its password hashed by the caller. The input is
 * carried, not copied into a new object, as a 1,000-link create makes 1,000 of these.
 */
export interface NewLink {
  input: LinkCreate;
  campaignId: string;
  passwordHash: string | null;
}

export type LinkChanges = Omit<LinkUpdate, 'password'> & { passwordHash?: string | null };

/** Columns of an update, in the table's own spelling where it differs from the API's. */
function changedColumns(changes: LinkChanges): Record<string, unknown> {
  const { forwardQuery, ...rest } = changes;
  return forwardQuery === undefined ? rest : { ...rest, forwardQuery: storedForwardQuery(forwardQuery) };
}

const GENERATION_ATTEMPTS = 8;

/** One item of a bulk write: its result, or the client-facing error that item alone got. */
export type ItemResult<T> = T | AppError;

/**
 * What createMany did. With `failure`, a statement failed and nothing more was tried:
 * the items without a result were not written, and those with one stand, as the
 * statements before it committed them.
 */
export interface CreatedLinks {
  results: Array<ItemResult<LinkRow> | undefined>;
  failure?: unknown;
}

const codeTaken = (code: string) => new AppError('CONFLICT', `Short code "${code}" is already taken on this domain`);
/** A domain found verified before the insert, deleted or failed by the time it ran. */
const domainNotServing = (domainId: string) => new AppError('VALIDATION_ERROR', 'Invalid link', [{ path: 'domainId', message: `domain ${domainId} is no longer verified` }]);

/** A generated code of the attempt's length: 62^7 ≈ 3.5e12, so a retry is rare; lengthen if a domain gets crowded. */
function generatedCode(attempt: number): string {
  for (;;) {
    const code = randomBase62(GENERATED_SHORT_CODE_LENGTH + Math.floor(attempt / 3));
    if (!reservedShortCodes.has(code.toLowerCase())) return code;
  }
}

/** What an insert writes, in LinkRow's spelling (the table's is the same in snake_case), besides `domain_key`. */
const INSERTED_COLUMNS = [
  'id', 'workspaceId', 'campaignId', 'domainId', 'shortCode', 'destinationUrl', 'defaultDestination', 'title',
  'description', 'enabled', 'passwordHash', 'expiresAt', 'expiredUrl', 'clicksLimit', 'redirectBehavior', 'deepLinkEnabled',
  'deepLinkIos', 'deepLinkAndroid', 'deepLinkFallbackUrl', 'conversionTracking', 'trackingType', 'tags', 'forwardQuery',
] as const satisfies ReadonlyArray<keyof LinkRow>;

/** Each inserted column's name in the table. */
const snakeColumn = Object.fromEntries(INSERTED_COLUMNS.map((c) => [c, postgres.fromCamel(c)])) as Record<(typeof INSERTED_COLUMNS)[number], string>;

/** What the database decides of an inserted link: its times and its domain's hostname. */
type DecidedByDatabase = 'domainHostname' | 'expiresAt' | 'createdAt' | 'updatedAt' | 'deletedAt';

/** A link as sent to the database: every inserted column (expiresAt as given; the database's value replaces it). */
type SentLink = Omit<LinkRow, DecidedByDatabase> & { expiresAt: LinkCreate['expiresAt'] };

function sentLink(workspaceId: string, id: string, shortCode: string, link: NewLink): SentLink {
  return {
    id,
    workspaceId,
    campaignId: link.campaignId,
    domainId: link.input.domainId,
    shortCode,
    destinationUrl: link.input.destinationUrl,
    defaultDestination: link.input.defaultDestination,
    title: link.input.title,
    description: link.input.description,
    enabled: link.input.enabled,
    passwordHash: link.passwordHash,
    expiresAt: link.input.expiresAt,
    expiredUrl: link.input.expiredUrl,
    clicksLimit: link.input.clicksLimit,
    redirectBehavior: link.input.redirectBehavior,
    deepLinkEnabled: link.input.deepLinkEnabled,
    deepLinkIos: link.input.deepLinkIos,
    deepLinkAndroid: link.input.deepLinkAndroid,
    deepLinkFallbackUrl: link.input.deepLinkFallbackUrl,
    conversionTracking: link.input.conversionTracking,
    trackingType: link.input.trackingType,
    tags: link.input.tags,
    forwardQuery: storedForwardQuery(link.input.forwardQuery),
  };
}

/**
 * The row of a link just inserted: what was sent, with what the database decided. Written
 * out field by field, not spread: spreading ~25 fields into a new literal cost ~7 us a
 * link (a profile of 1,000-link creates), a literal of known shape a fraction of that.
 */
function storedRow(link: SentLink, decided: Pick<LinkRow, 'domainHostname' | 'expiresAt' | 'createdAt' | 'updatedAt'>): LinkRow {
  return {
    id: link.id,
    workspaceId: link.workspaceId,
    campaignId: link.campaignId,
    domainId: link.domainId,
    domainHostname: decided.domainHostname,
    shortCode: link.shortCode,
    destinationUrl: link.destinationUrl,
    defaultDestination: link.defaultDestination,
    title: link.title,
    description: link.description,
    enabled: link.enabled,
    passwordHash: link.passwordHash,
    expiresAt: decided.expiresAt,
    expiredUrl: link.expiredUrl,
    clicksLimit: link.clicksLimit,
    redirectBehavior: link.redirectBehavior,
    deepLinkEnabled: link.deepLinkEnabled,
    deepLinkIos: link.deepLinkIos,
    deepLinkAndroid: link.deepLinkAndroid,
    deepLinkFallbackUrl: link.deepLinkFallbackUrl,
    conversionTracking: link.conversionTracking,
    trackingType: link.trackingType,
    tags: link.tags,
    forwardQuery: link.forwardQuery,
    createdAt: decided.createdAt,
    updatedAt: decided.updatedAt,
    deletedAt: null,
  };
}

/** The jsonb record of a sent link, keyed by the table's column names. */
function insertedRecord(link: SentLink): Record<string, unknown> {
  const record: Record<string, unknown> = { domain_key: link.domainId ?? '' };
  for (const column of INSERTED_COLUMNS) record[snakeColumn[column]] = link[column];
  return record;
}

export function linkStore(sql: Sql) {
  /** Columns of a LinkRow, from a links row `l` and its domain `d`. */
  const columns = sql`
      l.id, l.workspace_id, l.campaign_id, l.domain_id, d.hostname AS domain_hostname, l.short_code,
      l.destination_url, l.default_destination, l.title, l.description, l.enabled, l.password_hash,
      l.expires_at, l.expired_url, l.clicks_limit, l.redirect_behavior, l.deep_link_enabled, l.deep_link_ios,
      l.deep_link_android, l.deep_link_fallback_url, l.conversion_tracking, l.tracking_type, l.tags, l.forward_query,
      l.created_at, l.updated_at, l.deleted_at`;
  const select = sql`SELECT ${columns} FROM links l LEFT JOIN domains d ON d.id = l.domain_id`;
  // A fragment of constant identifiers: postgres.js reads sql(columns) after `INSERT INTO t (` as rows to insert.
  const insertedColumns = sql.unsafe(['domain_key', ...INSERTED_COLUMNS.map((c) => snakeColumn[c])].map((c) => `"${c}"`).join(', '));

  async function byId(workspaceId: string, id: string): Promise<LinkRow | undefined> {
    const [row] = await sql<LinkRow[]>`${select} WHERE l.id = ${id} AND l.workspace_id = ${workspaceId}`;
    return row;
  }

  async function byIds(workspaceId: string, ids: readonly string[]): Promise<Map<string, LinkRow>> {
    if (ids.length === 0) return new Map();
    const rows = await sql<LinkRow[]>`${select} WHERE l.id = ANY(${ids as string[]}) AND l.workspace_id = ${workspaceId}`;
    return new Map(rows.map((r) => [r.id, r]));
  }

  /**
   * Inserts the links in one statement; a link whose code is taken on its domain (by
   * a live or deleted link, or earlier in the same statement) is left out, as codes
   * are never reused. Returns the rows inserted, by id.
   *
   * The rows travel as one jsonb parameter, not as 24 parameters a row: for 1,000
   * links, 24,000 bind parameters cost postgres.js and the server ~100 ms more per
   * statement than parsing one document (issue 18, scratch timing in the same run).
   *
   * A custom domain's links go in only while the domain is verified, checked under a
   * share lock on its row: a deletion or failed verification under way (whose trigger
   * queues the snapshot updates of the links it sees) is waited for, then the link is left
   * out, so no link is published on a domain that just stopped serving and never taken
   * away. `verifiedDomains`: the domains found verified so (none asked: empty).
   */
  async function insert(
    workspaceId: string,
    links: Array<{ id: string; link: NewLink; shortCode: string }>,
  ): Promise<{ rows: Map<string, LinkRow>; verifiedDomains: Set<string> }> {
    const sent = links.map(({ id, link, shortCode }) => sentLink(workspaceId, id, shortCode, link));
    const domainIds = [...new Set(links.flatMap(({ link }) => (link.input.domainId ? [link.input.domainId] : [])))].sort();
    const records = sql.json(sent.map(insertedRecord) as never);
    // Every column is named: those not listed (created_at, ...) take their defaults. Only
    // what the database decides comes back (reading every column of 1,000 new rows back
    // was a fifth of the statement's time, issue 18); the rest is what was sent, stored as is.
    // Rows go in in code order: two batches taking the same codes in another order would
    // otherwise each wait on the other's uncommitted code (a deadlock).
    type Stored = { id: string | null; domainHostname: string | null; expiresAt: Date | null; createdAt: Date; updatedAt: Date; verifiedDomain: string | null };
    // One statement whether or not the batch has custom domains (with none, `verified` is empty).
    const stored = await retryingConcurrencyFailures(
      () => sql<Stored[]>`
      WITH verified AS MATERIALIZED (
        SELECT id FROM domains
        WHERE id = ANY(${domainIds}) AND workspace_id = ${workspaceId} AND status = 'verified' AND deleted_at IS NULL
        ORDER BY id FOR SHARE
      ), l AS (
        INSERT INTO links (${insertedColumns})
        SELECT ${insertedColumns} FROM jsonb_populate_recordset(NULL::links, ${records}) r
        WHERE r.domain_id IS NULL OR r.domain_id IN (SELECT id FROM verified)
        ORDER BY domain_key, short_code
        ON CONFLICT (domain_key, short_code) DO NOTHING
        RETURNING id, domain_id, expires_at, created_at, updated_at
      )
      SELECT l.id, d.hostname AS domain_hostname, l.expires_at, l.created_at, l.updated_at, NULL AS verified_domain FROM l LEFT JOIN domains d ON d.id = l.domain_id
      UNION ALL
      SELECT NULL, NULL, NULL, NULL, NULL, id FROM verified`,
    );
    const decided = new Map(stored.flatMap((row) => (row.id === null ? [] : [[row.id, row] as const])));
    const rows = new Map<string, LinkRow>();
    for (const link of sent) {
      const row = decided.get(link.id);
      if (row) rows.set(link.id, storedRow(link, row));
    }
    return { rows, verifiedDomains: new Set(stored.flatMap((row) => (row.verifiedDomain === null ? [] : [row.verifiedDomain]))) };
  }

  return {
    byId,
    byIds,

    /**
     * Creates every link it can, in order, in as few statements as codes allow: one
     * for all of them unless a generated code collides (those are retried with a new
     * code). A custom code taken fails that item alone; the caller gives each custom code
     * once (link-writes.ts: a repeat in a request is its own error there).
     *
     * A failing statement is returned, not thrown: a retry's comes after the first
     * statement committed links, and a caller told only of the failure would take those
     * for unwritten (and a client's retry would create them again).
     */
    async createMany(workspaceId: string, links: readonly NewLink[]): Promise<CreatedLinks> {
      const results: Array<ItemResult<LinkRow> | undefined> = new Array(links.length);
      let pending = links.map((link, index) =>
        link.input.shortCode === undefined
          ? { index, id: newId('link'), shortCode: generatedCode(0), custom: false }
          : { index, id: newId('link'), shortCode: link.input.shortCode, custom: true },
      );
      for (let attempt = 1; pending.length > 0 && attempt <= GENERATION_ATTEMPTS; attempt++) {
        let written: Awaited<ReturnType<typeof insert>>;
        try {
          written = await insert(workspaceId, pending.map((p) => ({ id: p.id, link: links[p.index]!, shortCode: p.shortCode })));
        } catch (failure) {
          return { results, failure };
        }
        const { rows: inserted, verifiedDomains } = written;
        const retry: typeof pending = [];
        for (const p of pending) {
          const row = inserted.get(p.id);
          const domainId = links[p.index]!.input.domainId;
          if (row) results[p.index] = row;
          else if (domainId && !verifiedDomains.has(domainId)) results[p.index] = domainNotServing(domainId);
          else if (p.custom) results[p.index] = codeTaken(p.shortCode);
          else retry.push({ ...p, shortCode: generatedCode(attempt) });
        }
        pending = retry;
      }
      for (const p of pending) results[p.index] = new AppError('CONFLICT', 'Could not generate a free short code; try again');
      return { results };
    },

    /**
     * By short code: the default domain unless a custom domain is named (by hostname or id).
     * Deleted links are not found, unless `withDeleted`: then the latest deleted link of the
     * code answers while no live link of the domain has it.
     */
    async byShortCode(workspaceId: string, shortCode: string, on: LinkDomain = {}, withDeleted = false): Promise<LinkRow | undefined> {
      // A hostname deleted and added again is a new domain, whose codes start free: the same
      // code may then name a link on each. While the workspace has a live domain of the
      // hostname (one at most), the hostname names it, and the code is its link's, live or
      // deleted, or no link's: a deleted domain's link answers only while there is none (by
      // its id and domainId always, so its history stays readable). Else the code's link on
      // the latest deleted domain that has it, a live link first.
      const domain =
        on.domainId !== undefined
          ? sql`AND l.domain_id = ${on.domainId}`
          : on.hostname !== undefined
            ? sql`
              AND lower(d.hostname) = ${on.hostname.toLowerCase()}
              AND (d.deleted_at IS NULL OR NOT EXISTS (
                SELECT 1 FROM domains live WHERE live.workspace_id = ${workspaceId} AND lower(live.hostname) = ${on.hostname.toLowerCase()} AND live.deleted_at IS NULL))`
            : sql`AND l.domain_id IS NULL`;
      const [row] = await sql<LinkRow[]>`
        ${select} WHERE l.workspace_id = ${workspaceId} AND l.short_code = ${shortCode} ${withDeleted ? sql`` : sql`AND l.deleted_at IS NULL`} ${domain}
        ORDER BY l.deleted_at IS NULL DESC, d.created_at DESC, l.deleted_at DESC LIMIT 1`;
      return row;
    },

    async list(
      workspaceId: string,
      query: {
        page: number;
        limit: number;
        campaignId?: string | undefined;
        domainId?: string | undefined;
        enabled?: boolean | undefined;
        q?: string | undefined;
        tag?: string[] | undefined;
        ids?: string[] | undefined;
        /** A link id of the workspace: the page starts after it (keyset), not at an offset. */
        startingAfter?: string | undefined;
      },
    ): Promise<{ items: LinkRow[]; total: number }> {
      if (query.startingAfter !== undefined) {
        const [known] = await sql`SELECT 1 FROM links WHERE id = ${query.startingAfter} AND workspace_id = ${workspaceId}`;
        if (!known) throw new AppError('VALIDATION_ERROR', 'Invalid query', [{ path: 'startingAfter', message: 'no link of this workspace has this id' }]);
      }
      const filters = [
        query.campaignId !== undefined ? sql`AND l.campaign_id = ${query.campaignId}` : sql``,
        query.domainId !== undefined ? sql`AND l.domain_id = ${query.domainId}` : sql``,
        query.enabled !== undefined ? sql`AND l.enabled = ${query.enabled}` : sql``,
        query.q !== undefined
          ? sql`AND (l.title ILIKE ${likeContains(query.q)} OR l.short_code ILIKE ${likeContains(query.q)} OR l.destination_url ILIKE ${likeContains(query.q)})`
          : sql``,
        query.tag !== undefined ? sql`AND l.tags && ${query.tag}::text[]` : sql``,
        query.ids !== undefined ? sql`AND l.id = ANY(${query.ids}::text[])` : sql``,
      ];
      const where = sql`WHERE l.workspace_id = ${workspaceId} AND l.deleted_at IS NULL ${filters[0]!} ${filters[1]!} ${filters[2]!} ${filters[3]!} ${filters[4]!} ${filters[5]!}`;
      // After a link (a deleted one too: it keeps its place in the order), by the order's key.
      const after =
        query.startingAfter === undefined
          ? sql``
          : sql`AND (l.created_at, l.id) < (SELECT created_at, id FROM links WHERE id = ${query.startingAfter} AND workspace_id = ${workspaceId})`;
      // The count and the page in one statement (one round trip: issue 18's profile had
      // the API's time going to Postgres writes); a page past the end is one row of nulls.
      const rows = await sql<Array<LinkRow & { total: number }>>`
        SELECT c.total, p.* FROM (SELECT count(*)::int AS total FROM links l ${where}) c
        LEFT JOIN (${select} ${where} ${after} ORDER BY l.created_at DESC, l.id DESC LIMIT ${query.limit} OFFSET ${(query.page - 1) * query.limit}) p ON true
        ORDER BY p.created_at DESC, p.id DESC`;
      // Rows keep their `total` field: presenting copies named fields only (copying
      // each row without it was a tenth of the list's CPU).
      return { items: rows[0]!.id === null ? [] : rows, total: rows[0]!.total };
    },

    /**
     * Applies each item's changes to its live link, all in one transaction; an item
     * whose every value equals the stored one leaves the row untouched. An item whose
     * `campaignId` differs from its link's, as the link is once locked here, moves it:
     * `moveRules` takes the link's rules along with its update, in a savepoint, and an
     * AppError it throws fails that item alone and undoes its part. Returns the errors
     * by item index; a link deleted meanwhile is simply not updated, and nothing of it moves.
     */
    async updateMany(
      workspaceId: string,
      items: ReadonlyArray<{ id: string; changes: LinkChanges }>,
      moveRules: (tx: Sql, linkId: string, campaignId: string) => Promise<void>,
    ): Promise<Map<number, AppError>> {
      let failed = new Map<number, AppError>();
      // A change equal to what is stored changes nothing: no row is updated, so
      // updated_at stays and the statement-level triggers queue no snapshot update and
      // no link.updated event. Compared in the UPDATE itself, against the row as it is
      // when the statement locks it (a concurrent change is seen, not a stale read).
      const update = (t: Sql, item: (typeof items)[number]) => {
        const columns = changedColumns(item.changes);
        const differs = Object.entries(columns)
          .map(([column, value]) => t`${t(column)} IS DISTINCT FROM ${value as never}`)
          .reduce((any, one) => t`${any} OR ${one}`);
        return t`
          UPDATE links SET ${t(columns)}, updated_at = now()
          WHERE id = ${item.id} AND workspace_id = ${workspaceId} AND deleted_at IS NULL AND (${differs})`;
      };
      // Rows are locked in id order, whatever the request's order: two bulk changes of the
      // same links in other orders would otherwise each wait on the other (a deadlock).
      // With a campaign named, every lock is taken up front in the one order all rule and
      // link writes follow (campaigns, then links, then rules; rule-store.ts). Every named
      // campaign is locked, the link's own too: whether the link moves is known only once
      // its row is locked, and a campaign locked after it would break that order.
      const byId = [...items.entries()].sort(([, a], [, b]) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const targets = [...new Set(items.flatMap((item) => (item.changes.campaignId !== undefined ? [item.changes.campaignId] : [])))].sort();
      await retryingConcurrencyFailures(() => {
        failed = new Map();
        return sql.begin(async (tx) => {
          const t = tx as unknown as Sql;
          // Each live link's campaign as locked: a move read from the link before this
          // transaction could be undone, or made, by a PATCH that committed meanwhile.
          let campaignOf = new Map<string, string>();
          if (targets.length > 0) {
            await t`SELECT id FROM campaigns WHERE id = ANY(${targets}) AND workspace_id = ${workspaceId} ORDER BY id FOR UPDATE`;
            const locked = await t<{ id: string; campaignId: string }[]>`
              SELECT id, campaign_id FROM links
              WHERE id = ANY(${byId.map(([, item]) => item.id)}) AND workspace_id = ${workspaceId} AND deleted_at IS NULL ORDER BY id FOR UPDATE`;
            campaignOf = new Map(locked.map((row) => [row.id, row.campaignId]));
          }
          const moves = (item: (typeof items)[number]) => {
            const from = campaignOf.get(item.id);
            return from !== undefined && item.changes.campaignId !== undefined && item.changes.campaignId !== from;
          };
          // Independent updates go out pipelined; moves one savepoint each.
          await Promise.all(byId.filter(([, item]) => !moves(item)).map(([, item]) => update(t, item)));
          for (const [index, item] of byId) {
            if (!moves(item)) continue;
            try {
              await tx.savepoint(async (sp) => {
                const s = sp as unknown as Sql;
                await moveRules(s, item.id, item.changes.campaignId!);
                await update(s, item);
              });
            } catch (err) {
              if (!isAppError(err)) throw err;
              failed.set(index, err);
            }
          }
        });
      });
      return failed;
    },

    /**
     * The ids of the live links with these short codes on the default domain, by code (as
     * `/links/{shortCode}` names a link): codes no live link has are absent. With
     * `deleted`, a deleted link's code names it too, as DELETE /links/{shortCode} reads it
     * (a code is never given out again on a domain, so it names one link at most).
     */
    async idsByShortCode(workspaceId: string, codes: readonly string[], options: { deleted?: boolean } = {}): Promise<Map<string, string>> {
      if (codes.length === 0) return new Map();
      const rows = await sql<{ id: string; shortCode: string }[]>`
        SELECT id, short_code FROM links
        WHERE workspace_id = ${workspaceId} AND short_code = ANY(${codes as string[]}) AND domain_id IS NULL
          ${options.deleted ? sql`` : sql`AND deleted_at IS NULL`}`;
      return new Map(rows.map((r) => [r.shortCode, r.id]));
    },

    /**
     * Soft delete: the row (and so its short code) stays, so the code is never reissued.
     * Per id: 'deleted', or 'already_deleted'; ids that are not the workspace's links are
     * absent from the answer. One statement for all.
     */
    async softDeleteMany(workspaceId: string, ids: readonly string[]): Promise<Map<string, 'deleted' | 'already_deleted'>> {
      // Locked in id order (see updateMany).
      const rows = await retryingConcurrencyFailures(() => sql<{ id: string; deletedNow: boolean }[]>`
        WITH target AS (SELECT id, deleted_at FROM links WHERE id = ANY(${ids as string[]}) AND workspace_id = ${workspaceId} ORDER BY id FOR UPDATE),
        updated AS (UPDATE links SET deleted_at = now(), updated_at = now()
          WHERE id IN (SELECT id FROM target WHERE deleted_at IS NULL) RETURNING id)
        SELECT t.id, u.id IS NOT NULL AS deleted_now FROM target t LEFT JOIN updated u ON u.id = t.id`);
      return new Map(rows.map((r) => [r.id, r.deletedNow ? 'deleted' : 'already_deleted']));
    },
  };
}

export type LinkStore = ReturnType<typeof linkStore>;
