import type { Sql } from '../../../shared/db/postgres.ts';

export interface LinkName {
  shortCode: string;
  /** The link's custom domain (hostname); null on the default domain. Codes are unique per domain. */
  domain: string | null;
  deleted: boolean;
}

/**
 * The workspace's links among `linkIds` (live and deleted) by id, in one query: how
 * reports name links. A deleted link keeps its short code and says it is deleted (its
 * clicks are history, and the code may name a newer link now). An id that names no link
 * of the workspace (another workspace's, in rows that carry it) is absent: neither live
 * nor deleted is known of it. A link on a custom domain carries its hostname (a deleted
 * domain's too: its links' clicks were made there).
 */
export async function linkNames(sql: Sql, workspaceId: string, linkIds: readonly string[]): Promise<Map<string, LinkName>> {
  if (linkIds.length === 0) return new Map();
  const rows = await sql<Array<{ id: string; shortCode: string; domain: string | null; deleted: boolean }>>`
    SELECT l.id, l.short_code, d.hostname AS domain, l.deleted_at IS NOT NULL AS deleted
    FROM links l LEFT JOIN domains d ON d.id = l.domain_id AND d.workspace_id = l.workspace_id
    WHERE l.workspace_id = ${workspaceId} AND l.id IN ${sql([...linkIds])}`;
  return new Map(rows.map((r) => [r.id, { shortCode: r.shortCode, domain: r.domain, deleted: r.deleted }]));
}

/** `host/code` on a custom domain, the code alone on the default one: how a report labels a link. */
export function linkLabel(name: LinkName): string {
  return name.domain ? `${name.domain}/${name.shortCode}` : name.shortCode;
}

/**
 * A top-links row's naming: the short code, `domain` for a link on a custom domain, and
 * `deleted` for a link of the workspace (absent otherwise, as in breakdowns).
 */
export function namedLink(names: Map<string, LinkName>, linkId: string): { shortCode: string; domain?: string; deleted?: boolean } {
  const name = names.get(linkId);
  if (!name) return { shortCode: '' };
  return { shortCode: name.shortCode, ...(name.domain ? { domain: name.domain } : {}), deleted: name.deleted };
}
