import { AppError } from '../../../shared/errors.ts';
import { newId, randomBase62 } from '../../../shared/ids.ts';
import { likeContains } from '../../../shared/db/rows.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import { GENERATED_SHORT_CODE_LENGTH, reservedShortCodes } from '../../../shared/schemas/short-code.ts';
import { storedForwardQuery, type Link, type LinkCreate, type LinkUpdate, type StoredForwardQuery } from '../../../shared/schemas/link.ts';

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

/** Everything of a link the store writes; the route resolves references and hashes first. */
export type NewLink = Omit<LinkCreate, 'password' | 'shortCode' | 'campaignId'> & {
  shortCode: string | undefined;
  campaignId: string;
  passwordHash: string | null;
};

export type LinkChanges = Omit<LinkUpdate, 'password'> & { passwordHash?: string | null };

/** Columns of an update, in the table's own spelling where it differs from the API's. */
function changedColumns(changes: LinkChanges): Record<string, unknown> {
  const { forwardQuery, ...rest } = changes;
  return forwardQuery === undefined ? rest : { ...rest, forwardQuery: storedForwardQuery(forwardQuery) };
}

const GENERATION_ATTEMPTS = 8;

export function linkStore(sql: Sql) {
  const select = sql`
    SELECT l.id, l.workspace_id, l.campaign_id, l.domain_id, d.hostname AS domain_hostname, l.short_code,
      l.destination_url, l.default_destination, l.title, l.description, l.enabled, l.password_hash,
      l.expires_at, l.expired_url, l.clicks_limit, l.redirect_behavior, l.deep_link_enabled, l.deep_link_ios,
      l.deep_link_android, l.deep_link_fallback_url, l.conversion_tracking, l.tracking_type, l.tags, l.forward_query,
      l.created_at, l.updated_at, l.deleted_at
    FROM links l LEFT JOIN domains d ON d.id = l.domain_id`;

  async function byId(workspaceId: string, id: string): Promise<LinkRow | undefined> {
    const [row] = await sql<LinkRow[]>`${select} WHERE l.id = ${id} AND l.workspace_id = ${workspaceId}`;
    return row;
  }

  /** Inserts with a given code, or null when the code is taken on that domain (never reused). */
  async function insert(workspaceId: string, link: NewLink, shortCode: string): Promise<string | null> {
    const id = newId('link');
    const rows = await sql`
      INSERT INTO links (id, workspace_id, campaign_id, domain_id, domain_key, short_code, destination_url,
        default_destination, title, description, enabled, password_hash, expires_at, expired_url, clicks_limit,
        redirect_behavior, deep_link_enabled, deep_link_ios, deep_link_android, deep_link_fallback_url,
        conversion_tracking, tracking_type, tags, forward_query)
      VALUES (${id}, ${workspaceId}, ${link.campaignId}, ${link.domainId}, ${link.domainId ?? ''}, ${shortCode},
        ${link.destinationUrl}, ${link.defaultDestination}, ${link.title}, ${link.description}, ${link.enabled},
        ${link.passwordHash}, ${link.expiresAt}, ${link.expiredUrl}, ${link.clicksLimit}, ${link.redirectBehavior},
        ${link.deepLinkEnabled}, ${link.deepLinkIos}, ${link.deepLinkAndroid}, ${link.deepLinkFallbackUrl},
        ${link.conversionTracking}, ${link.trackingType}, ${link.tags}, ${storedForwardQuery(link.forwardQuery)})
      ON CONFLICT (domain_key, short_code) DO NOTHING
      RETURNING id`;
    return rows.length === 1 ? id : null;
  }

  return {
    byId,

    async create(workspaceId: string, link: NewLink): Promise<LinkRow> {
      let id: string | null = null;
      if (link.shortCode !== undefined) {
        id = await insert(workspaceId, link, link.shortCode);
        if (!id) throw new AppError('CONFLICT', `Short code "${link.shortCode}" is already taken on this domain`);
      } else {
        // Random codes: 62^7 ≈ 3.5e12, so a retry is rare; lengthen if a domain gets crowded.
        for (let attempt = 0; attempt < GENERATION_ATTEMPTS && !id; attempt++) {
          const code = randomBase62(GENERATED_SHORT_CODE_LENGTH + Math.floor(attempt / 3));
          if (reservedShortCodes.has(code.toLowerCase())) continue;
          id = await insert(workspaceId, link, code);
        }
        if (!id) throw new AppError('CONFLICT', 'Could not generate a free short code; try again');
      }
      return (await byId(workspaceId, id))!;
    },

    /** By short code: the default domain unless a hostname is named. Deleted links are not found. */
    async byShortCode(workspaceId: string, shortCode: string, hostname?: string): Promise<LinkRow | undefined> {
      const domain = hostname === undefined ? sql`AND l.domain_id IS NULL` : sql`AND lower(d.hostname) = ${hostname.toLowerCase()}`;
      const [row] = await sql<LinkRow[]>`
        ${select} WHERE l.workspace_id = ${workspaceId} AND l.short_code = ${shortCode} AND l.deleted_at IS NULL ${domain}`;
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
      },
    ): Promise<{ items: LinkRow[]; total: number }> {
      const filters = [
        query.campaignId !== undefined ? sql`AND l.campaign_id = ${query.campaignId}` : sql``,
        query.domainId !== undefined ? sql`AND l.domain_id = ${query.domainId}` : sql``,
        query.enabled !== undefined ? sql`AND l.enabled = ${query.enabled}` : sql``,
        query.q !== undefined
          ? sql`AND (l.title ILIKE ${likeContains(query.q)} OR l.short_code ILIKE ${likeContains(query.q)} OR l.destination_url ILIKE ${likeContains(query.q)})`
          : sql``,
        query.tag !== undefined ? sql`AND l.tags && ${query.tag}::text[]` : sql``,
      ];
      const where = sql`WHERE l.workspace_id = ${workspaceId} AND l.deleted_at IS NULL ${filters[0]!} ${filters[1]!} ${filters[2]!} ${filters[3]!} ${filters[4]!}`;
      const [count] = await sql<{ total: number }[]>`SELECT count(*)::int AS total FROM links l ${where}`;
      const items = await sql<LinkRow[]>`
        ${select} ${where} ORDER BY l.created_at DESC, l.id DESC LIMIT ${query.limit} OFFSET ${(query.page - 1) * query.limit}`;
      return { items, total: count!.total };
    },

    /** `alongside` runs in the same transaction, for changes that must commit with the link's. */
    async update(workspaceId: string, id: string, changes: LinkChanges, alongside?: (tx: Sql) => Promise<void>): Promise<LinkRow> {
      await sql.begin(async (tx) => {
        const t = tx as unknown as Sql;
        if (alongside) await alongside(t);
        await t`
          UPDATE links SET ${t(changedColumns(changes))}, updated_at = now()
          WHERE id = ${id} AND workspace_id = ${workspaceId} AND deleted_at IS NULL`;
      });
      return (await byId(workspaceId, id))!;
    },

    /** Soft delete: the row (and so its short code) stays, so the code is never reissued. */
    async softDelete(workspaceId: string, id: string): Promise<'deleted' | 'already_deleted' | 'not_found'> {
      const [row] = await sql<{ deletedNow: boolean }[]>`
        WITH target AS (SELECT id, deleted_at FROM links WHERE id = ${id} AND workspace_id = ${workspaceId} FOR UPDATE),
        updated AS (UPDATE links SET deleted_at = now(), updated_at = now()
          WHERE id IN (SELECT id FROM target WHERE deleted_at IS NULL) RETURNING id)
        SELECT EXISTS (SELECT 1 FROM updated) AS deleted_now FROM target`;
      if (!row) return 'not_found';
      return row.deletedNow ? 'deleted' : 'already_deleted';
    },
  };
}

export type LinkStore = ReturnType<typeof linkStore>;
