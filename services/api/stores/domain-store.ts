import type { Sql } from '../../../shared/db/postgres.ts';

export interface DomainRef {
  id: string;
  hostname: string;
  status: 'pending' | 'verified' | 'failed';
}

export function domainStore(sql: Sql) {
  return {
    /** A live (not deleted) domain of the workspace, whatever its verification status. */
    async find(workspaceId: string, id: string): Promise<DomainRef | undefined> {
      const [row] = await sql<DomainRef[]>`
        SELECT id, hostname, status FROM domains WHERE id = ${id} AND workspace_id = ${workspaceId} AND deleted_at IS NULL`;
      return row;
    },
  };
}

export type DomainStore = ReturnType<typeof domainStore>;
