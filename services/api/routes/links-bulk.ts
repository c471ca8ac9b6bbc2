import type Router from '@koa/router';
import type { Context } from 'koa';
import type { z } from 'zod';
import { AppError, isAppError } from '../../../shared/errors.ts';
import { linkCreateSchema, linkUpdateSchema, type LinkCreate, type LinkUpdate } from '../../../shared/schemas/link.ts';
import { bulkLinkId, linkBulkCreateEnvelope, linkBulkDeleteEnvelope, linkBulkUpdateEnvelope, linkBulkUpdateItem } from '../../../shared/schemas/link-bulk.ts';
import { parseInput } from '../../../shared/schemas/validation.ts';
import { principalOf } from '../middleware/auth.ts';
import { bodyOf } from '../middleware/json-body.ts';
import { ok } from '../respond.ts';
import type { ItemResult, LinkRow, LinkStore } from '../stores/link-store.ts';
import { hasPrefix } from '../../../shared/ids.ts';
import { linkNotFound, type LinkRouteDeps } from './links.ts';

type ItemAnswer = { index: number; success: true; data: unknown } | { index: number; success: false; error: ReturnType<AppError['toJSON']> };

const answer = (index: number, result: unknown): ItemAnswer =>
  isAppError(result) ? { index, success: false, error: result.toJSON() } : { index, success: true, data: result };

/** Validates one item with the single-link schema: its value, or its own 400. */
function parseItem<T extends z.ZodType>(schema: T, input: unknown, what: string): ItemResult<z.output<T>> {
  try {
    return parseInput(schema, input, what);
  } catch (err) {
    if (isAppError(err)) return err;
    throw err;
  }
}

/** `{ids, patch}`'s one patch; a bad one fails the request (400), its reasons under `patch`. */
function sharedPatch(patch: unknown): LinkUpdate {
  const parsed = parseItem(linkUpdateSchema, patch, 'link update');
  if (!isAppError(parsed)) return parsed;
  throw new AppError('VALIDATION_ERROR', 'Invalid bulk update: the patch for all links', parsed.details?.map((d) => ({ ...d, path: d.path.split(', ').map((p) => (p === '(root)' ? 'patch' : `patch.${p}`)).join(', ') })));
}

/**
 * Items' link names as ids: a short code (on the default domain, as `/links/{shortCode}`
 * takes one) becomes its live link's id, in one query for all; an unknown code stays as
 * it is, and is then not found. Errors pass through.
 */
async function asLinkIds(links: LinkStore, workspaceId: string, names: ReadonlyArray<ItemResult<string>>, options: { deleted?: boolean } = {}): Promise<Array<ItemResult<string>>> {
  const codes = [...new Set(names.filter((n): n is string => !isAppError(n) && !hasPrefix(n, 'link')))];
  const ids = await links.idsByShortCode(workspaceId, codes, options);
  return names.map((n) => (isAppError(n) ? n : (ids.get(n) ?? n)));
}

/**
 * Links a bulk create writes per INSERT: while Postgres stores one chunk, the API
 * publishes the one before. In one INSERT and then one publish each side waited on the
 * other; a 1,000-link create answered in 113-114 ms in chunks of 500 against 119-123 ms
 * whole (medians of 20, alternating runs on one machine; chunks of 250: 115-118 ms, of
 * 125: 122-124 ms).
 */
const BULK_WRITE_CHUNK = 500;

const duplicateId = () => new AppError('VALIDATION_ERROR', 'Invalid item', [{ path: 'id', message: 'this id appears earlier in the request' }]);

/**
 * POST, PATCH and DELETE /links/bulk: up to 1,000 links in one request, which counts
 * once against the rate limit. Each item is checked and applied on its own; the
 * answer (200) lists every item in request order as `{index, success, data}` or
 * `{index, success: false, error}`. The envelope itself (not an object, no items,
 * more than 1,000) is a 400 for the whole request. Writes are batched (an INSERT for
 * every BULK_WRITE_CHUNK new links, one transaction for the updates, one statement for
 * the deletes), and their snapshot updates go out in publisher passes (outbox-publisher.ts),
 * a create's beside its next INSERT.
 */
export function linkBulkRoutes(router: Router, deps: LinkRouteDeps): void {
  const { links, writes, present, requireScope } = deps;

  /** Every item's answer, links with their counters (one lookup per 200). */
  async function answered(ctx: Context, results: ReadonlyArray<ItemResult<LinkRow>>): Promise<ItemAnswer[]> {
    const rows = results.filter((r): r is LinkRow => !isAppError(r));
    const shown = new Map((await present.withCounters(ctx, rows)).map((link) => [link.id, link]));
    return results.map((r, index) => answer(index, isAppError(r) ? r : shown.get(r.id)));
  }

  router.post('/links/bulk', requireScope('links:write'), async (ctx) => {
    const { links: items } = parseInput(linkBulkCreateEnvelope, await bodyOf(ctx), 'bulk create');
    const parsed = items.map((item) => parseItem(linkCreateSchema, item, 'link'));
    const valid = parsed.flatMap((p, index) => (isAppError(p) ? [] : [{ index, input: p as LinkCreate }]));
    // Each chunk's snapshot updates start going out while the next chunk is written.
    const publishes: Array<Promise<void>> = [];
    const created = await writes.create(principalOf(ctx).workspaceId, valid.map((v) => v.input), {
      chunk: BULK_WRITE_CHUNK,
      written: () => publishes.push(deps.onLinkChanged()),
    });
    const results: Array<ItemResult<LinkRow>> = parsed.map((p) => p as AppError);
    valid.forEach((v, i) => (results[v.index] = created[i]!));
    // The answer is built while the last chunk publishes (its wait is mostly I/O).
    const answers = results.map((r, index) => answer(index, isAppError(r) ? r : present.fresh(r)));
    await Promise.all(publishes);
    ok(ctx, answers);
  });

  router.patch('/links/bulk', requireScope('links:write'), async (ctx) => {
    const body = parseInput(linkBulkUpdateEnvelope, await bodyOf(ctx), 'bulk update');
    const workspaceId = principalOf(ctx).workspaceId;
    // One patch for all (parsed once), or one per link. A bad id or item fails alone, as
    // a bad patch of one item does; a bad patch for all is the envelope's, failed once.
    const shared = body.ids ? sharedPatch(body.patch) : undefined;
    const named = body.ids
      ? body.ids.map((raw) => {
          const id = parseItem(bulkLinkId, raw, 'link id');
          return isAppError(id) ? { id: '', patch: id } : { id, patch: shared };
        })
      : body.links!.map((raw) => {
          const item = parseItem(linkBulkUpdateItem, raw, 'item');
          return isAppError(item) ? { id: '', patch: item } : { id: item.id, patch: parseItem(linkUpdateSchema, item.patch, 'link update') };
        });
    const ids = await asLinkIds(links, workspaceId, named.map((n) => (isAppError(n.patch) ? n.patch : n.id)));
    const items = named.map((n, i) => (isAppError(n.patch) ? n : { id: ids[i] as string, patch: n.patch }));
    const current = await links.byIds(workspaceId, items.flatMap((i) => (isAppError(i.patch) ? [] : [i.id])));
    const seen = new Set<string>();
    const results: Array<ItemResult<LinkRow>> = items.map(({ id, patch }) => {
      if (isAppError(patch)) return patch;
      const row = current.get(id);
      if (!row || row.deletedAt) return linkNotFound();
      if (seen.has(id)) return duplicateId();
      seen.add(id);
      return row;
    });
    const valid = results.flatMap((r, index) => (isAppError(r) ? [] : [{ index, current: r, input: items[index]!.patch as LinkUpdate }]));
    const updated = await writes.update(workspaceId, valid);
    valid.forEach((v, i) => (results[v.index] = updated[i]!));
    if (updated.some((r) => !isAppError(r))) await deps.onLinkChanged();
    ok(ctx, await answered(ctx, results));
  });

  router.delete('/links/bulk', requireScope('links:write'), async (ctx) => {
    const { ids: raw } = parseInput(linkBulkDeleteEnvelope, await bodyOf(ctx), 'bulk delete');
    const workspaceId = principalOf(ctx).workspaceId;
    // A deleted link's code names it, so deleting it again is ALREADY_DELETED, as DELETE /links/{shortCode} says.
    const ids = await asLinkIds(links, workspaceId, raw.map((id) => parseItem(bulkLinkId, id, 'link id')), { deleted: true });
    const outcomes = await links.softDeleteMany(workspaceId, [...new Set(ids.filter((id): id is string => !isAppError(id)))]);
    const seen = new Set<string>();
    const results = ids.map((id, index) => {
      if (isAppError(id)) return answer(index, id);
      const outcome = outcomes.get(id);
      const first = !seen.has(id);
      seen.add(id);
      if (outcome === undefined) return answer(index, linkNotFound());
      if (!first) return answer(index, duplicateId());
      if (outcome === 'already_deleted') return answer(index, new AppError('ALREADY_DELETED', 'Link has already been deleted'));
      return answer(index, { id, deleted: true });
    });
    if ([...outcomes.values()].includes('deleted')) await deps.onLinkChanged();
    ok(ctx, results);
  });
}
