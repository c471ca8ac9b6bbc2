import { LRUCache } from 'lru-cache';
import { AppError } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import { iso } from '../../../shared/db/rows.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import type { Campaign, CampaignCreate, CampaignUpdate } from '../../../shared/schemas/campaign.ts';

interface CampaignRow {
  id: string;
  name: string;
  description: string;
  status: Campaign['status'];
  isDefault: boolean;
  createdAt: Date;
  updatedAt: Date;
}

const columns = (sql: Sql) => sql`id, name, description, status, is_default, created_at, updated_at`;

function present(row: CampaignRow): Campaign {
  return { ...row, createdAt: iso(row.createdAt), updatedAt: iso(row.updatedAt) };
}

/** Workspaces whose default campaign one instance remembers (an id each). */
const DEFAULT_IDS_KEPT = 50_000;

export function campaignStore(sql: Sql) {
  // A workspace's default campaign is made with it and never changes (nothing moves
  // is_default, and campaigns are never deleted), so remembering it is exact.
  const defaultIds = new LRUCache<string, string>({ max: DEFAULT_IDS_KEPT });
  return {
    async create(workspaceId: string, input: CampaignCreate): Promise<Campaign> {
      const [row] = await sql<CampaignRow[]>`
        INSERT INTO campaigns (id, workspace_id, name, description, status)
        VALUES (${newId('campaign')}, ${workspaceId}, ${input.name}, ${input.description}, ${input.status})
        RETURNING ${columns(sql)}`;
      return present(row!);
    },

    async get(workspaceId: string, id: string): Promise<Campaign> {
      const [row] = await sql<CampaignRow[]>`
        SELECT ${columns(sql)} FROM campaigns WHERE id = ${id} AND workspace_id = ${workspaceId}`;
      if (!row) throw new AppError('NOT_FOUND', 'Campaign not found');
      return present(row);
    },

    /** Which of the ids name campaigns of the workspace, in one query. */
    async existing(workspaceId: string, ids: readonly string[]): Promise<Set<string>> {
      if (ids.length === 0) return new Set();
      const rows = await sql<{ id: string }[]>`SELECT id FROM campaigns WHERE id = ANY(${ids as string[]}) AND workspace_id = ${workspaceId}`;
      return new Set(rows.map((r) => r.id));
    },

    async defaultId(workspaceId: string): Promise<string> {
      const known = defaultIds.get(workspaceId);
      if (known !== undefined) return known;
      const [row] = await sql<{ id: string }[]>`SELECT id FROM campaigns WHERE workspace_id = ${workspaceId} AND is_default`;
      if (!row) throw new Error(`workspace ${workspaceId} has no default campaign`);
      defaultIds.set(workspaceId, row.id);
      return row.id;
    },

    async list(workspaceId: string, query: { page: number; limit: number; status?: Campaign['status'] | undefined }) {
      const status = query.status ? sql`AND status = ${query.status}` : sql``;
      const [{ total }] = (await sql<{ total: number }[]>`
        SELECT count(*)::int AS total FROM campaigns WHERE workspace_id = ${workspaceId} ${status}`) as unknown as [{ total: number }];
      const rows = await sql<CampaignRow[]>`
        SELECT ${columns(sql)} FROM campaigns WHERE workspace_id = ${workspaceId} ${status}
        ORDER BY created_at DESC, id DESC LIMIT ${query.limit} OFFSET ${(query.page - 1) * query.limit}`;
      return { items: rows.map(present), total };
    },

    async update(workspaceId: string, id: string, changes: CampaignUpdate): Promise<Campaign> {
      const [row] = await sql<CampaignRow[]>`
        UPDATE campaigns SET ${sql(changes as Record<string, string>)}, updated_at = now()
        WHERE id = ${id} AND workspace_id = ${workspaceId}
        RETURNING ${columns(sql)}`;
      if (!row) throw new AppError('NOT_FOUND', 'Campaign not found');
      return present(row);
    },
  };
}

export type CampaignStore = ReturnType<typeof campaignStore>;
