import type { Sql } from '../../../shared/db/postgres.ts';

/**
 * The hostname each domain's snapshot marker carries (shared/snapshot/snapshot-entry.ts
 * DomainEntry), lowercased: while the domain is verified, and after it was deleted or
 * failed if it was ever verified (a tombstone: redirectors keep the hostname a custom
 * domain, its codes 404 instead of falling back to the default domain's, see migration
 * 0029); null for a domain never verified (pending, or a claim that lost) and an unknown
 * id. Its links are published only while it is verified (load-compiled-links.ts). Reads
 * inside the caller's transaction.
 */
export async function loadDomainMarkers(tx: Sql, domainIds: readonly string[]): Promise<Map<string, string | null>> {
  const result = new Map<string, string | null>(domainIds.map((id) => [id, null]));
  if (domainIds.length === 0) return result;
  const rows = await tx<{ id: string; hostname: string }[]>`
    SELECT id, lower(hostname) AS hostname FROM domains
    WHERE id IN ${tx(domainIds as string[])} AND (status = 'verified' AND deleted_at IS NULL OR ever_verified)`;
  for (const row of rows) result.set(row.id, row.hostname);
  return result;
}
