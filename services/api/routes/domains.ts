import type Router from '@koa/router';
import { AppError } from '../../../shared/errors.ts';
import { pagination } from '../../../shared/schemas/common.ts';
import { domainCreateSchema, domainListQuerySchema, VERIFICATION_PREFIX } from '../../../shared/schemas/domain.ts';
import { parseInput } from '../../../shared/schemas/validation.ts';
import type { DomainVerifier } from '../domain-verifier.ts';
import { principalOf, type RequireScope } from '../middleware/auth.ts';
import { bodyOf } from '../middleware/json-body.ts';
import { created, ok, okList } from '../respond.ts';
import type { DomainStore } from '../stores/domain-store.ts';

const domainNotFound = () => new AppError('NOT_FOUND', 'Domain not found');

/**
 * Custom domains: register a hostname, publish the TXT record we answer with,
 * verify it through DNS. Only verified domains take links; deleting a domain
 * makes its links stop resolving (they stay, readable, with their counters).
 */
export function domainRoutes(
  router: Router,
  deps: { domains: DomainStore; verifier: DomainVerifier; requireScope: RequireScope; onDomainChanged(): Promise<void>; /** DOMAIN_RECHECK_GRACE_MS */ recheckGraceMs: number },
): void {
  const { domains, requireScope } = deps;

  router.get('/domains', requireScope('links:read'), async (ctx) => {
    const query = parseInput(domainListQuerySchema, ctx.query, 'query');
    const { items, total } = await domains.list(principalOf(ctx).workspaceId, query);
    okList(ctx, items, pagination(query.page, query.limit, total));
  });

  router.post('/domains', requireScope('domains:write'), async (ctx) => {
    const input = parseInput(domainCreateSchema, await bodyOf(ctx), 'domain');
    created(ctx, await domains.create(principalOf(ctx).workspaceId, input.hostname));
  });

  router.post('/domains/:id/verify', requireScope('domains:write'), async (ctx) => {
    const domain = await domains.get(principalOf(ctx).workspaceId, ctx.params.id!);
    if (!domain) throw domainNotFound();
    const result = await deps.verifier.check(`${VERIFICATION_PREFIX}${domain.hostname}`, domain.verification.value);
    let updated;
    // The first workspace to verify a hostname owns it; a later one's claim turns failed.
    if (result.verified) updated = await domains.setVerified(domain.id, domain.hostname);
    else if (domain.status !== 'verified') updated = (await domains.setFailed(domain.id, result.reason)) ?? (await domains.get(principalOf(ctx).workspaceId, domain.id));
    // A verified domain keeps its verification through a miss as through the re-checks'
    // (failing, for the grace period: an owner pressing Verify while the record
    // propagates does not lose the domain), and a lookup that failed tells nothing.
    else if (!result.dnsAnswered) throw new AppError('SERVICE_UNAVAILABLE', `${result.reason}; the domain stays verified`);
    else updated = (await domains.missed(domain.id, result.reason, deps.recheckGraceMs)) ?? (await domains.get(principalOf(ctx).workspaceId, domain.id));
    await deps.onDomainChanged();
    if (!updated) throw domainNotFound();
    ok(ctx, updated);
  });

  router.delete('/domains/:id', requireScope('domains:write'), async (ctx) => {
    if (!(await domains.delete(principalOf(ctx).workspaceId, ctx.params.id!))) throw domainNotFound();
    await deps.onDomainChanged();
    ok(ctx, { id: ctx.params.id, deleted: true });
  });
}
