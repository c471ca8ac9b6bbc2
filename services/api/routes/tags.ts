import type Router from '@koa/router';
import { pagination } from '../../../shared/schemas/common.ts';
import { tagListQuerySchema } from '../../../shared/schemas/tag.ts';
import { parseInput } from '../../../shared/schemas/validation.ts';
import { principalOf, type RequireScope } from '../middleware/auth.ts';
import { okList } from '../respond.ts';
import type { TagStore } from '../stores/tag-store.ts';

/** GET /tags: the workspace's tags with their link counts, by name. Tags are set on links. */
export function tagRoutes(router: Router, deps: { tags: TagStore; requireScope: RequireScope }): void {
  router.get('/tags', deps.requireScope('links:read'), async (ctx) => {
    const query = parseInput(tagListQuerySchema, ctx.query, 'query');
    const { items, total } = await deps.tags.list(principalOf(ctx).workspaceId, query);
    okList(ctx, items, pagination(query.page, query.limit, total));
  });
}
