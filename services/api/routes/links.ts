import type Router from '@koa/router';
import type { Context } from 'koa';
import { AppError } from '../../../shared/errors.ts';
import { hasPrefix } from '../../../shared/ids.ts';
import { hashPassword } from '../../../shared/auth/password-hash.ts';
import { parseInput } from '../../../shared/schemas/validation.ts';
import { pagination } from '../../../shared/schemas/common.ts';
import { linkCreateSchema, linkGetQuerySchema, linkListQuerySchema, linkUpdateSchema } from '../../../shared/schemas/link.ts';
import { principalOf, type RequireScope } from '../middleware/auth.ts';
import { bodyOf } from '../middleware/json-body.ts';
import { created, ok, okList } from '../respond.ts';
import type { PresentLink } from '../link-presenter.ts';
import type { LinkCountersSource } from '../link-counters.ts';
import type { CampaignStore } from '../stores/campaign-store.ts';
import type { DomainStore } from '../stores/domain-store.ts';
import type { LinkChanges, LinkRow, LinkStore } from '../stores/link-store.ts';
import type { RuleStore } from '../stores/rule-store.ts';

export interface LinkRouteDeps {
  links: LinkStore;
  campaigns: CampaignStore;
  domains: DomainStore;
  presentLink: PresentLink;
  counters: LinkCountersSource;
  requireScope: RequireScope;
  rules: RuleStore;
  /** Called after every committed change to a link (snapshot updates hang here). */
  onLinkChanged(link: LinkRow): Promise<void>;
}

const linkNotFound = () => new AppError('NOT_FOUND', 'Link not found');

export function linkRoutes(router: Router, deps: LinkRouteDeps): void {
  const { links, campaigns, domains, presentLink, requireScope } = deps;

  /** Links as the API shows them: one counters query for the whole set, never one per link. */
  async function present(ctx: Context, rows: LinkRow[]) {
    const { counters, available } = await deps.counters.forLinks(principalOf(ctx).workspaceId, rows.map((r) => r.id));
    if (!available) ctx.set('X-Linkroute-Counters', 'unavailable');
    return rows.map((row) => presentLink(row, counters.get(row.id)));
  }

  /** Body references name resources of the caller's workspace; others read as absent. */
  async function checkCampaign(workspaceId: string, campaignId: string): Promise<void> {
    if (!(await campaigns.exists(workspaceId, campaignId))) {
      throw new AppError('VALIDATION_ERROR', 'Invalid link', [{ path: 'campaignId', message: 'campaign not found' }]);
    }
  }

  /** By link id, or by short code in the same position (spec 4.5). Deleted links are not found. */
  async function findLive(ctx: Context, hostname?: string): Promise<LinkRow> {
    const workspaceId = principalOf(ctx).workspaceId;
    const idOrCode = ctx.params.id!;
    const row = hasPrefix(idOrCode, 'link') ? await links.byId(workspaceId, idOrCode) : await links.byShortCode(workspaceId, idOrCode, hostname);
    if (!row || row.deletedAt) throw linkNotFound();
    return row;
  }

  router.post('/links', requireScope('links:write'), async (ctx) => {
    const input = parseInput(linkCreateSchema, await bodyOf(ctx), 'link');
    const workspaceId = principalOf(ctx).workspaceId;
    const campaignId = input.campaignId ?? (await campaigns.defaultId(workspaceId));
    if (input.campaignId) await checkCampaign(workspaceId, input.campaignId);
    if (input.domainId) {
      const domain = await domains.find(workspaceId, input.domainId);
      if (!domain || domain.status !== 'verified') {
        throw new AppError('VALIDATION_ERROR', 'Invalid link', [
          { path: 'domainId', message: domain ? `domain ${domain.hostname} is not verified` : 'domain not found' },
        ]);
      }
    }
    const { password, ...rest } = input;
    const row = await links.create(workspaceId, {
      ...rest,
      shortCode: input.shortCode,
      campaignId,
      passwordHash: password === null ? null : await hashPassword(password),
    });
    await deps.onLinkChanged(row);
    created(ctx, presentLink(row));
  });

  router.get('/links', requireScope('links:read'), async (ctx) => {
    const query = parseInput(linkListQuerySchema, ctx.query, 'query');
    const { items, total } = await links.list(principalOf(ctx).workspaceId, query);
    okList(ctx, await present(ctx, items), pagination(query.page, query.limit, total));
  });

  router.get('/links/:id', requireScope('links:read'), async (ctx) => {
    const query = parseInput(linkGetQuerySchema, ctx.query, 'query');
    const row = await findLive(ctx, query.domain);
    const [link] = await present(ctx, [row]);
    ok(ctx, query.include === 'rules' ? { ...link!, rules: await deps.rules.forLink(row) } : link);
  });

  router.patch('/links/:id', requireScope('links:write'), async (ctx) => {
    const input = parseInput(linkUpdateSchema, await bodyOf(ctx), 'link update');
    const current = await findLive(ctx);
    if (input.campaignId !== undefined) await checkCampaign(current.workspaceId, input.campaignId);
    const { password, ...rest } = input;
    const changes: LinkChanges = { ...rest };
    if (password !== undefined) changes.passwordHash = password === null ? null : await hashPassword(password);
    const moving = input.campaignId !== undefined && input.campaignId !== current.campaignId;
    const row = await links.update(
      current.workspaceId,
      current.id,
      changes,
      moving ? (tx) => deps.rules.moveLinkRules(tx, current.workspaceId, current.id, input.campaignId!) : undefined,
    );
    await deps.onLinkChanged(row);
    ok(ctx, (await present(ctx, [row]))[0]);
  });

  router.delete('/links/:id', requireScope('links:write'), async (ctx) => {
    const workspaceId = principalOf(ctx).workspaceId;
    const idOrCode = ctx.params.id!;
    // A short code names only live links, so deleting by code twice reads as not found.
    const id = hasPrefix(idOrCode, 'link') ? idOrCode : (await links.byShortCode(workspaceId, idOrCode))?.id;
    const outcome = id ? await links.softDelete(workspaceId, id) : 'not_found';
    if (outcome === 'not_found') throw linkNotFound();
    if (outcome === 'already_deleted') throw new AppError('ALREADY_DELETED', 'Link has already been deleted');
    await deps.onLinkChanged((await links.byId(workspaceId, id!))!);
    ok(ctx, { id, deleted: true });
  });

}
