import type { Sql } from '../../../shared/db/postgres.ts';

export interface LinkName {
  shortCode: string;
  deleted: boolean;
}

/**
 * The workspace's links among `linkIds` (live and deleted) by id, in one query: how
 * reports name links. A deleted link keeps its short code and says it is deleted (its
 * clicks are history, and the code may name a newer link now). An id that names no link
 * of the workspace (another workspace's, in rows that carry it) is absent: neither live
 * nor deleted is known of it.
 */
export async function linkNames(sql: Sql, workspaceId: string, linkIds: readonly string[]): Promise<Map<string, LinkName>> {
  if (linkIds.length === 0) return new Map();
  const rows = await sql<Array<{ id: string; shortCode: string; deleted: boolean }>>`
    SELECT id, short_code, deleted_at IS NOT NULL AS deleted FROM links WHERE workspace_id = ${workspaceId} AND id IN ${sql([...linkIds])}`;
  return new Map(rows.map((r) => [r.id, { shortCode: r.shortCode, deleted: r.deleted }]));
}

/** A top-links row's naming: the short code, and `deleted` for a link of the workspace (absent otherwise, as in breakdowns). */
export function namedLink(names: Map<string, LinkName>, linkId: string): { shortCode: string; deleted?: boolean } {
  const name = names.get(linkId);
  return name ? { shortCode: name.shortCode, deleted: name.deleted } : { shortCode: '' };
}
