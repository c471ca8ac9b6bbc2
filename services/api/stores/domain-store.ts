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
  checkedAt: Date | null;
  failingSince: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** The TXT record that proves control of the hostname's DNS. */
function verificationRecord(hostname: string, token: string): { name: string; value: string } {
  return { name: `${VERIFICATION_PREFIX}${hostname}`, value: `linkroute-verify=${token}` };
}

function present(row: DomainRow, redirectBaseUrl: string): Domain {
  return {
    id: row.id,
    hostname: row.hostname,
    status: row.status,
    verification: { type: 'TXT', ...verificationRecord(row.hostname, row.verificationToken) },
    routing: routingRecord(row.hostname, redirectBaseUrl),
    failureReason: row.failureReason,
    verifiedAt: iso(row.verifiedAt),
    checkedAt: iso(row.checkedAt),
    failingSince: iso(row.failingSince),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

/** `redirectBaseUrl`: REDIRECT_BASE_URL, where custom domains are told to point. */
export function domainStore(sql: Sql, redirectBaseUrl: string) {
  const columns = sql`id, hostname, status, verification_token, failure_reason, verified_at, checked_at, failing_since, created_at, updated_at`;
  /**
   * A re-check's claim version: checked_at in microseconds since the epoch, as text. Not
   * the timestamp itself: postgres.js sends a timestamptz parameter through a JS Date,
   * which keeps milliseconds, so the claim would never match again.
   */
  const claimVersion = (column: 'checked_at' | 'd.checked_at') => sql.unsafe(`(extract(epoch from ${column}) * 1000000)::bigint::text`);

  /**
   * A failed verification of a domain not verified: it stops taking (and serving) links until
   * verified again. undefined: deleted meanwhile, or verified meanwhile (two verifies at once
   * while the record propagates: the one that found it wins, whichever commits last).
   */
  async function setFailed(id: string, reason: string): Promise<Domain | undefined> {
    const [row] = await sql<DomainRow[]>`
      UPDATE domains SET status = 'failed', failure_reason = ${reason}, verified_at = null, checked_at = now(), failing_since = null, updated_at = now()
      WHERE id = ${id} AND deleted_at IS NULL AND status <> 'verified' RETURNING ${columns}`;
    return row && present(row, redirectBaseUrl);
  }

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

    /**
     * A claim: any number of workspaces may hold one on a hostname while none has verified
     * it; a workspace holds one at a time (409), and a verified hostname is 409 for every
     * other workspace. The verified check is in the INSERT; a verification committing at
     * the same moment can still let a claim in, which then can never verify (verify()).
     */
    async create(workspaceId: string, hostname: string): Promise<Domain> {
      let rows: DomainRow[];
      try {
        rows = await sql<DomainRow[]>`
          INSERT INTO domains (id, workspace_id, hostname, verification_token)
          SELECT ${newId('domain')}, ${workspaceId}, ${hostname}, ${randomBase62(32)}
          WHERE NOT EXISTS (SELECT 1 FROM domains WHERE lower(hostname) = lower(${hostname}) AND status = 'verified' AND deleted_at IS NULL)
          RETURNING ${columns}`;
      } catch (err) {
        if (isUniqueViolation(err, 'domains_workspace_hostname_live')) throw new AppError('CONFLICT', `Hostname ${hostname} is already registered in this workspace`);
        throw err;
      }
      if (rows.length === 0) {
        const [owner] = await sql<{ workspaceId: string }[]>`
          SELECT workspace_id FROM domains WHERE lower(hostname) = lower(${hostname}) AND status = 'verified' AND deleted_at IS NULL`;
        // Verified by this workspace: the same answer as a duplicate claim.
        throw new AppError('CONFLICT', owner?.workspaceId === workspaceId ? `Hostname ${hostname} is already registered in this workspace` : `Hostname ${hostname} is verified by another workspace`);
      }
      return present(rows[0]!, redirectBaseUrl);
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

    setFailed,

    /**
     * Its TXT record was found: the domain becomes verified unless another workspace holds
     * the hostname verified (then it turns failed, saying so), and the other workspaces'
     * claims on it turn failed. The partial unique index domains_hostname_verified is what
     * keeps a second owner out, whatever the number of API instances; verifications of one
     * hostname queue on an advisory lock first, so they neither deadlock on each other's
     * rows nor fail on the index but where another writer skipped the lock.
     */
    async setVerified(id: string, hostname: string): Promise<Domain | undefined> {
      const taken = `${hostname} was verified by another workspace`;
      try {
        const row = (await sql.begin(async (tx) => {
          const t = tx as unknown as Sql;
          await t`SELECT pg_advisory_xact_lock(hashtext(${`domain:${hostname.toLowerCase()}`}))`;
          const [owner] = await t`SELECT id FROM domains WHERE lower(hostname) = lower(${hostname}) AND status = 'verified' AND deleted_at IS NULL AND id <> ${id}`;
          if (owner) return null;
          const [mine] = await t<DomainRow[]>`
            UPDATE domains SET status = 'verified', failure_reason = null, verified_at = coalesce(verified_at, now()), checked_at = now(), failing_since = null, updated_at = now()
            WHERE id = ${id} AND deleted_at IS NULL RETURNING ${columns}`;
          if (!mine) return undefined; // deleted meanwhile
          await t`
            UPDATE domains SET status = 'failed', failure_reason = ${taken}, verified_at = null, updated_at = now()
            WHERE lower(hostname) = lower(${hostname}) AND id <> ${id} AND deleted_at IS NULL`;
          return mine;
        })) as DomainRow | null | undefined;
        if (row !== null) return row && present(row, redirectBaseUrl);
      } catch (err) {
        if (!isUniqueViolation(err, 'domains_hostname_verified')) throw err;
      }
      return setFailed(id, taken);
    },

    /**
     * Up to `limit` verified domains last checked `everyMs` ago or more (or never), claimed
     * for a re-check by setting their checked_at now: however many API instances re-check,
     * each takes other domains (SKIP LOCKED) and a domain is checked once per period.
     * `claimed` (checked_at to the microsecond, as text: claimVersion) is the claim's
     * version: a verify request meanwhile sets checked_at anew, and the re-check's result is
     * then dropped (recheckFound, missed).
     */
    async claimRechecks(everyMs: number, limit: number): Promise<Array<{ id: string; hostname: string; claimed: string; record: { name: string; value: string } }>> {
      const due = await sql<Array<{ id: string; hostname: string; verificationToken: string; claimed: string }>>`
        UPDATE domains d SET checked_at = now()
        FROM (
          SELECT id FROM domains
          WHERE status = 'verified' AND deleted_at IS NULL AND (checked_at IS NULL OR checked_at <= now() - ${everyMs} * interval '1 millisecond')
          ORDER BY checked_at NULLS FIRST LIMIT ${limit} FOR UPDATE SKIP LOCKED
        ) due
        WHERE d.id = due.id
        RETURNING d.id, d.hostname, d.verification_token, ${claimVersion('d.checked_at')} AS claimed`;
      return due.map((d) => ({ id: d.id, hostname: d.hostname, claimed: d.claimed, record: verificationRecord(d.hostname, d.verificationToken) }));
    },

    /** A re-check found the TXT record: the domain is not failing (any more), unless a verify request came between. */
    async recheckFound(id: string, claimed: string): Promise<void> {
      await sql`UPDATE domains SET failing_since = null WHERE id = ${id} AND ${claimVersion('checked_at')} = ${claimed} AND failing_since IS NOT NULL`;
    },

    /**
     * The TXT record of a verified domain was not found (DNS answered): it is failing since
     * the first such miss, and once that is `graceMs` ago it fails (its links stop
     * resolving, the hostname is free), in the same statement. `claimed`: a re-check's
     * claim, dropped when a verify request came between; without it (a verify request
     * itself), its own check. Returns the domain, unless it was not verified any more
     * (failed, deleted) or the claim was dropped.
     */
    async missed(id: string, reason: string, graceMs: number, claimed?: string): Promise<Domain | undefined> {
      // failing_since as it is after this miss, and whether that is past the grace.
      const [row] = await sql<DomainRow[]>`
        WITH t AS (
          SELECT coalesce(failing_since, now()) AS since, coalesce(failing_since, now()) <= now() - ${graceMs} * interval '1 millisecond' AS expired
          FROM domains
          WHERE id = ${id} AND status = 'verified' AND deleted_at IS NULL ${claimed === undefined ? sql`` : sql`AND ${claimVersion('checked_at')} = ${claimed}`}
          FOR UPDATE
        )
        UPDATE domains SET
          status = CASE WHEN t.expired THEN 'failed' ELSE status END,
          failure_reason = CASE WHEN t.expired
            THEN 'its TXT record was not found by the re-checks since ' || to_char(t.since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ' (' || ${reason}::text || '); publish it and verify again'
            ELSE failure_reason END,
          verified_at = CASE WHEN t.expired THEN null ELSE verified_at END,
          failing_since = CASE WHEN t.expired THEN null ELSE t.since END,
          checked_at = ${claimed === undefined ? sql`now()` : sql`checked_at`},
          updated_at = CASE WHEN t.expired THEN now() ELSE updated_at END
        FROM t WHERE domains.id = ${id}
        RETURNING ${columns}`;
      return row && present(row, redirectBaseUrl);
    },

    /** Soft delete: the trigger of migration 0003 republishes its links, which stop resolving. */
    async delete(workspaceId: string, id: string): Promise<boolean> {
      const rows = await sql`UPDATE domains SET deleted_at = now(), updated_at = now() WHERE id = ${id} AND workspace_id = ${workspaceId} AND deleted_at IS NULL RETURNING id`;
      return rows.length === 1;
    },
  };
}

export type DomainStore = ReturnType<typeof domainStore>;
