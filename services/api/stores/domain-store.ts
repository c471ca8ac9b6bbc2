import { randomBase62 } from '../../../shared/ids.ts';
import { newId } from '../../../shared/ids.ts';
import { iso } from '../../../shared/db/rows.ts';
import { isUniqueViolation, type Sql } from '../../../shared/db/postgres.ts';
import { AppError } from '../../../shared/errors.ts';
import { VERIFICATION_PREFIX, type Domain } from '../../../shared/schemas/domain.ts';
import { routingRecord } from '../domain-routing.ts';

export interface DomainRef {
  id: string;
  hostname: string;
  status: 'pending' | 'verified' | 'failed';
}

interface DomainRow {
  id: string;
  hostname: string;
  status: Domain['status'];
  verificationToken: string;
  failureReason: string | null;
  verifiedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

function present(row: DomainRow, redirectBaseUrl: string): Domain {
  return {
    id: row.id,
    hostname: row.hostname,
    status: row.status,
    verification: { type: 'TXT', name: `${VERIFICATION_PREFIX}${row.hostname}`, value: `linkroute-verify=${row.verificationToken}` },
    routing: routingRecord(row.hostname, redirectBaseUrl),
    failureReason: row.failureReason,
    verifiedAt: iso(row.verifiedAt),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

/** `redirectBaseUrl`: REDIRECT_BASE_URL, where custom domains are told to point. */
export function domainStore(sql: Sql, redirectBaseUrl: string) {
  const columns = sql`id, hostname, status, verification_token, failure_reason, verified_at, created_at, updated_at`;
  return {
    /** The live (not deleted) domains of the workspace among the ids, whatever their verification status, in one query. */
    async findMany(workspaceId: string, ids: readonly string[]): Promise<Map<string, DomainRef>> {
      if (ids.length === 0) return new Map();
      const rows = await sql<DomainRef[]>`
        SELECT id, hostname, status FROM domains WHERE id = ANY(${ids as string[]}) AND workspace_id = ${workspaceId} AND deleted_at IS NULL`;
      return new Map(rows.map((r) => [r.id, r]));
    },

    async get(workspaceId: string, id: string): Promise<Domain | undefined> {
      const [row] = await sql<DomainRow[]>`SELECT ${columns} FROM domains WHERE id = ${id} AND workspace_id = ${workspaceId} AND deleted_at IS NULL`;
      return row && present(row, redirectBaseUrl);
    },

    /** A hostname is live in one workspace at a time (409 otherwise), across all workspaces. */
    async create(workspaceId: string, hostname: string): Promise<Domain> {
      try {
        const [row] = await sql<DomainRow[]>`
          INSERT INTO domains (id, workspace_id, hostname, verification_token)
          VALUES (${newId('domain')}, ${workspaceId}, ${hostname}, ${randomBase62(32)})
          RETURNING ${columns}`;
        return present(row!, redirectBaseUrl);
      } catch (err) {
        if (isUniqueViolation(err)) throw new AppError('CONFLICT', `Hostname ${hostname} is already registered`);
        throw err;
      }
    },

    async list(workspaceId: string, query: { page: number; limit: number; status?: Domain['status'] | undefined }) {
      const status = query.status ? sql`AND status = ${query.status}` : sql``;
      const [count] = await sql<{ total: number }[]>`
        SELECT count(*)::int AS total FROM domains WHERE workspace_id = ${workspaceId} AND deleted_at IS NULL ${status}`;
      const rows = await sql<DomainRow[]>`
        SELECT ${columns} FROM domains WHERE workspace_id = ${workspaceId} AND deleted_at IS NULL ${status}
        ORDER BY created_at DESC, id DESC LIMIT ${query.limit} OFFSET ${(query.page - 1) * query.limit}`;
      return { items: rows.map((row) => present(row, redirectBaseUrl)), total: count!.total };
    },

    async setVerification(id: string, result: { verified: boolean; reason: string | null }): Promise<Domain> {
      const [row] = await sql<DomainRow[]>`
        UPDATE domains SET status = ${result.verified ? 'verified' : 'failed'}, failure_reason = ${result.reason},
          verified_at = ${result.verified ? sql`coalesce(verified_at, now())` : null}, updated_at = now()
        WHERE id = ${id} AND deleted_at IS NULL RETURNING ${columns}`;
      return present(row!, redirectBaseUrl);
    },

    /** Soft delete: the trigger of migration 0003 republishes its links, which stop resolving. */
    async delete(workspaceId: string, id: string): Promise<boolean> {
      const rows = await sql`UPDATE domains SET deleted_at = now(), updated_at = now() WHERE id = ${id} AND workspace_id = ${workspaceId} AND deleted_at IS NULL RETURNING id`;
      return rows.length === 1;
    },
  };
}

export type DomainStore = ReturnType<typeof domainStore>;
