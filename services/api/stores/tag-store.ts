import { likeContains } from '../../../shared/db/rows.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import type { Tag } from '../../../shared/schemas/tag.ts';

/**
 * Tags live on their links (links.tags), so a tag exists while a live link carries
 * it: there is nothing to create, rename or orphan.
 */
export function tagStore(sql: Sql) {
  return {
    /** The workspace's tags by name, each with its count of live links. */
    async list(workspaceId: string, query: { page: number; limit: number; q?: string | undefined }): Promise<{ items: Tag[]; total: number }> {
      // q comes spelled as tags are (tagListQuerySchema); likeContains escapes its % and _.
      const match = query.q === undefined ? sql`` : sql`WHERE name LIKE ${likeContains(query.q)}`;
      const [page] = await sql<{ items: Tag[] | null; total: number }[]>`
        WITH tags AS (
          SELECT t.name, count(*)::int AS link_count
          FROM links l CROSS JOIN LATERAL unnest(l.tags) AS t(name)
          WHERE l.workspace_id = ${workspaceId} AND l.deleted_at IS NULL
          GROUP BY t.name
        ), matching AS (SELECT * FROM tags ${match})
        SELECT (SELECT count(*)::int FROM matching) AS total,
          (SELECT json_agg(json_build_object('name', name, 'linkCount', link_count) ORDER BY name)
           FROM (SELECT * FROM matching ORDER BY name LIMIT ${query.limit} OFFSET ${(query.page - 1) * query.limit}) p) AS items`;
      return { items: page!.items ?? [], total: page!.total };
    },
  };
}

export type TagStore = ReturnType<typeof tagStore>;
