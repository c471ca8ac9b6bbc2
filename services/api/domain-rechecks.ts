import { errorFields, type Logger } from '../../shared/logger.ts';
import type { Sql } from '../../shared/db/postgres.ts';
import type { ApiConfig } from './config.ts';
import { dnsVerifier } from './domain-verifier.ts';
import { domainStore } from './stores/domain-store.ts';

/** Domains one pass checks at most (their DNS lookups run at once); the rest wait for the next pass. */
const PER_PASS = 20;

export interface DomainRechecks {
  /** One pass: checks the due domains (at most PER_PASS); what it checked and what failed. Off (0) or not, it checks what is due. */
  runOnce(): Promise<{ checked: number; failed: number }>;
  /** Stops the passes; a pass under way ends first. */
  stop(): Promise<void>;
}

/**
 * Verified domains are checked again every `everyMs` (DOMAIN_RECHECK_EVERY_MS, a day by
 * default; 0 turns the checks off), as Dub does: a domain whose TXT record a re-check does not find is failing
 * (`failingSince`) and, when the re-checks have not found it for `graceMs`
 * (DOMAIN_RECHECK_GRACE_MS, 7 days), turns `failed`: its links stop resolving and the
 * hostname is free for whoever controls its DNS now. A record found again in between
 * ends the failing. A lookup that fails (the resolver down, a timeout) counts for nothing.
 *
 * Any number of API instances run this: each pass claims its domains in Postgres
 * (domain-store claimRechecks), so each domain is checked once per period.
 */
export function startDomainRechecks(deps: {
  sql: Sql;
  config: Pick<ApiConfig, 'REDIRECT_BASE_URL' | 'DNS_SERVERS' | 'DOMAIN_RECHECK_EVERY_MS' | 'DOMAIN_RECHECK_GRACE_MS'>;
  logger: Logger;
  /** After a domain failed: its links' snapshot updates go out (the outbox loop would, later). */
  onDomainFailed(): Promise<void>;
  /** How often an instance looks for due domains (default a minute). */
  pollMs?: number;
}): DomainRechecks {
  const { config, logger } = deps;
  const domains = domainStore(deps.sql, config.REDIRECT_BASE_URL);
  const verifier = dnsVerifier(config.DNS_SERVERS);
  let running: Promise<unknown> | null = null;

  async function runOnce(): Promise<{ checked: number; failed: number }> {
    const due = await domains.claimRechecks(config.DOMAIN_RECHECK_EVERY_MS, PER_PASS);
    // Every domain's record is written before the pass ends, failures included (stop() waits for the pass).
    const outcomes = await Promise.allSettled(
      due.map(async (d) => {
        const result = await verifier.check(d.record.name, d.record.value);
        if (result.verified) {
          await domains.recheckFound(d.id, d.claimed);
          return false;
        }
        // Our lookup failed (the resolver down or misconfigured): nothing is known of the
        // record, and a week of that must not fail every domain. The next period asks again.
        if (!result.dnsAnswered) {
          logger.warn('domain re-check could not look the record up', { domainId: d.id, hostname: d.hostname, reason: result.reason });
          return false;
        }
        const after = await domains.missed(d.id, result.reason, config.DOMAIN_RECHECK_GRACE_MS, d.claimed);
        if (after?.status === 'failed') logger.warn('domain failed its re-checks: its links stop resolving', { domainId: d.id, hostname: d.hostname, reason: after.failureReason });
        else if (after) logger.info('domain re-check did not find its TXT record', { domainId: d.id, hostname: d.hostname, reason: result.reason });
        return after?.status === 'failed';
      }),
    );
    const failed = outcomes.filter((o) => o.status === 'fulfilled' && o.value).length;
    if (failed > 0) await deps.onDomainFailed();
    const refused = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
    if (refused) throw refused.reason;
    return { checked: due.length, failed };
  }

  /** Passes until one finds fewer than PER_PASS due, so a backlog of many domains is worked off at once, not 20 a minute. */
  async function passes(): Promise<void> {
    while ((await runOnce()).checked === PER_PASS);
  }

  const timer = config.DOMAIN_RECHECK_EVERY_MS === 0 ? null : setInterval(() => {
    if (running) return;
    // A failed pass (Postgres away) is the next one's to retry: its claimed domains are due again after everyMs.
    running = passes()
      .catch((err) => logger.warn('domain re-checks failed; will retry', errorFields(err)))
      .finally(() => (running = null));
  }, deps.pollMs ?? 60_000);
  timer?.unref();

  return {
    runOnce,
    async stop() {
      if (timer) clearInterval(timer);
      await running;
    },
  };
}
