import type Router from '@koa/router';
import { parseInput } from '../../../shared/schemas/validation.ts';
import { campaignCreateSchema, campaignListQuerySchema, campaignUpdateSchema } from '../../../shared/schemas/campaign.ts';
import { pagination } from '../../../shared/schemas/common.ts';
import { principalOf, type RequireScope } from '../middleware/auth.ts';
import { bodyOf } from '../middleware/json-body.ts';
import { created, ok, okList } from '../respond.ts';
import type { CampaignStore } from '../stores/campaign-store.ts';

/** Reading campaigns needs `links:read` (there is no separate read scope for them). */
export function campaignRoutes(router: Router, deps: { campaigns: CampaignStore; requireScope: RequireScope }): void {
  const { campaigns, requireScope } = deps;

  router.get('/campaigns', requireScope('links:read'), async (ctx) => {
    const query = parseInput(campaignListQuerySchema, ctx.query, 'query');
    const { items, total } = await campaigns.list(principalOf(ctx).workspaceId, query);
    okList(ctx, items, pagination(query.page, query.limit, total));
  });

  router.post('/campaigns', requireScope('campaigns:write'), async (ctx) => {
    const input = parseInput(campaignCreateSchema, await bodyOf(ctx), 'campaign');
    created(ctx, await campaigns.create(principalOf(ctx).workspaceId, input));
  });

  router.get('/campaigns/:id', requireScope('links:read'), async (ctx) => {
    ok(ctx, await campaigns.get(principalOf(ctx).workspaceId, ctx.params.id!));
  });

  router.patch('/campaigns/:id', requireScope('campaigns:write'), async (ctx) => {
    const changes = parseInput(campaignUpdateSchema, await bodyOf(ctx), 'campaign update');
    ok(ctx, await campaigns.update(principalOf(ctx).workspaceId, ctx.params.id!, changes));
  });

}
