import type Router from '@koa/router';
import type { Context } from 'koa';
import { AppError, isAppError } from '../../../shared/errors.ts';
import { hasPrefix } from '../../../shared/ids.ts';
import { parseInput } from '../../../shared/schemas/validation.ts';
import { pagination } from '../../../shared/schemas/common.ts';
import { linkCreateSchema, linkGetQuerySchema, linkListQuerySchema, linkLocatorQuerySchema, linkUpdateSchema } from '../../../shared/schemas/link.ts';
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
  /** Called after every committed change to links (snapshot updates hang here). Never rejects: a failed publish is retried by the publisher's loop. */
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

  /**
   * The link named by id, or by short code in the same position (spec 4.5), on the domain
   * `?domain=`/`?domainId=` name (else the default domain; a link id on another domain is
   * not found either). A deleted link is found only `withDeleted`; by code, only while no
   * live link of the domain has the code.
   */
  async function find(ctx: Context, locator: { domain?: string | undefined; domainId?: string | undefined }, withDeleted = false): Promise<LinkRow> {
    const on: LinkDomain = { hostname: locator.domain, domainId: locator.domainId };
    const workspaceId = principalOf(ctx).workspaceId;
    const idOrCode = ctx.params.id!;
    const row = hasPrefix(idOrCode, 'link') ? await links.byId(workspaceId, idOrCode) : await links.byShortCode(workspaceId, idOrCode, on, withDeleted);
    if (!row || (row.deletedAt && !withDeleted)) throw linkNotFound();
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
    const { include, ...locator } = parseInput(linkGetQuerySchema, ctx.query, 'query');
    const row = await find(ctx, locator);
    const [link] = await present.withCounters(ctx, [row]);
    ok(ctx, include === 'rules' ? { ...link!, rules: await deps.rules.forLink(row) } : link);
  });

  router.patch('/links/:id', requireScope('links:write'), async (ctx) => {
    const input = parseInput(linkUpdateSchema, await bodyOf(ctx), 'link update');
    const current = await find(ctx, parseInput(linkLocatorQuerySchema, ctx.query, 'query'));
    const row = single((await writes.update(current.workspaceId, [{ current, input }]))[0]);
    await deps.onLinkChanged();
    ok(ctx, (await present.withCounters(ctx, [row]))[0]);
  });

  router.delete('/links/:id', requireScope('links:write'), async (ctx) => {
    // Deleting by code twice is 410 as by id: the code still names its deleted link
    // (codes are never given out again on a domain).
    const { id, deletedAt } = await find(ctx, parseInput(linkLocatorQuerySchema, ctx.query, 'query'), true);
    const outcome = deletedAt ? 'already_deleted' : (await links.softDeleteMany(principalOf(ctx).workspaceId, [id])).get(id);
    if (outcome === undefined) throw linkNotFound();
    if (outcome === 'already_deleted') throw new AppError('ALREADY_DELETED', 'Link has already been deleted');
    await deps.onLinkChanged();
    ok(ctx, { id, deleted: true });
  });
}
