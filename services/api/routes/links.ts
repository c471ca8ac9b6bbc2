import type Router from '@koa/router';
import type { Context } from 'koa';
import { AppError, isAppError } from '../../../shared/errors.ts';
import { hasPrefix } from '../../../shared/ids.ts';
import { parseInput } from '../../../shared/schemas/validation.ts';
import { pagination } from '../../../shared/schemas/common.ts';
import { linkCreateSchema, linkGetQuerySchema, linkListQuerySchema, linkUpdateSchema } from '../../../shared/schemas/link.ts';
import { principalOf, type RequireScope } from '../middleware/auth.ts';
import { bodyOf } from '../middleware/json-body.ts';
import { created, ok, okList } from '../respond.ts';
import type { LinkPresentation } from '../link-presenter.ts';
import type { LinkWrites } from '../link-writes.ts';
import type { ItemResult, LinkDomain, LinkRow, LinkStore } from '../stores/link-store.ts';
import type { RuleStore } from '../stores/rule-store.ts';

export interface LinkRouteDeps {
  links: LinkStore;
  writes: LinkWrites;
  present: LinkPresentation;
  requireScope: RequireScope;
  rules: RuleStore;
  /** Called after every committed change to links (snapshot updates hang here). */
  onLinkChanged(): Promise<void>;
}

export const linkNotFound = () => new AppError('NOT_FOUND', 'Link not found');

/** The one result of a single-link write, or its error. */
function single(result: ItemResult<LinkRow> | undefined): LinkRow {
  if (result === undefined) throw new Error('a single write returned no result');
  if (isAppError(result)) throw result;
  return result;
}

export function linkRoutes(router: Router, deps: LinkRouteDeps): void {
  const { links, writes, present, requireScope } = deps;

  /** By link id, or by short code in the same position (spec 4.5). Deleted links are not found. */
  /** The live link named by id or short code; `on` names the domain (a link id on another domain is not found either). */
  async function findLive(ctx: Context, on: LinkDomain = {}): Promise<LinkRow> {
    const workspaceId = principalOf(ctx).workspaceId;
    const idOrCode = ctx.params.id!;
    const row = hasPrefix(idOrCode, 'link') ? await links.byId(workspaceId, idOrCode) : await links.byShortCode(workspaceId, idOrCode, on);
    if (!row || row.deletedAt) throw linkNotFound();
    if (on.domainId !== undefined && row.domainId !== on.domainId) throw linkNotFound();
    if (on.hostname !== undefined && row.domainHostname?.toLowerCase() !== on.hostname.toLowerCase()) throw linkNotFound();
    return row;
  }

  router.post('/links', requireScope('links:write'), async (ctx) => {
    const input = parseInput(linkCreateSchema, await bodyOf(ctx), 'link');
    const row = single((await writes.create(principalOf(ctx).workspaceId, [input]))[0]);
    await deps.onLinkChanged();
    created(ctx, present.fresh(row));
  });

  router.get('/links', requireScope('links:read'), async (ctx) => {
    const query = parseInput(linkListQuerySchema, ctx.query, 'query');
    const { items, total } = await links.list(principalOf(ctx).workspaceId, query);
    okList(ctx, await present.withCounters(ctx, items), pagination(query.page, query.limit, total));
  });

  router.get('/links/:id', requireScope('links:read'), async (ctx) => {
    const query = parseInput(linkGetQuerySchema, ctx.query, 'query');
    const row = await findLive(ctx, { hostname: query.domain, domainId: query.domainId });
    const [link] = await present.withCounters(ctx, [row]);
    ok(ctx, query.include === 'rules' ? { ...link!, rules: await deps.rules.forLink(row) } : link);
  });

  router.patch('/links/:id', requireScope('links:write'), async (ctx) => {
    const input = parseInput(linkUpdateSchema, await bodyOf(ctx), 'link update');
    const current = await findLive(ctx);
    const row = single((await writes.update(current.workspaceId, [{ current, input }]))[0]);
    await deps.onLinkChanged();
    ok(ctx, (await present.withCounters(ctx, [row]))[0]);
  });

  router.delete('/links/:id', requireScope('links:write'), async (ctx) => {
    const workspaceId = principalOf(ctx).workspaceId;
    const idOrCode = ctx.params.id!;
    // A short code names only live links, so deleting by code twice reads as not found.
    const id = hasPrefix(idOrCode, 'link') ? idOrCode : (await links.byShortCode(workspaceId, idOrCode))?.id;
    const outcome = id ? (await links.softDeleteMany(workspaceId, [id])).get(id) : undefined;
    if (outcome === undefined) throw linkNotFound();
    if (outcome === 'already_deleted') throw new AppError('ALREADY_DELETED', 'Link has already been deleted');
    await deps.onLinkChanged();
    ok(ctx, { id, deleted: true });
  });
}
