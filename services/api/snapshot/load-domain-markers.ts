import type { Sql } from '../../../shared/db/postgres.ts';

/**
 * The hostname each domain's snapshot marker carries (shared/snapshot/snapshot-entry.ts
 * DomainEntry): lowercased while the domain is verified and not deleted, else null (an
 * unknown id too). Reads inside the caller's transaction.
 */
export async function loadDomainMarkers(tx: Sql, domainIds: readonly string[]): Promise<Map<string, string | null>> {
  const result = new Map<string, string | null>(domainIds.map((id) => [id, null]));
  if (domainIds.length === 0) return result;
  const rows = await tx<{ id: string; hostname: string }[]>`
    SELECT id, lower(hostname) AS hostname FROM domains
    WHERE id IN ${tx(domainIds as string[])} AND status = 'verified' AND deleted_at IS NULL`;
  for (const row of rows) result.set(row.id, row.hostname);
  return result;
}
