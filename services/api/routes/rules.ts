import type Router from '@koa/router';
import { AppError } from '../../../shared/errors.ts';
import { parseInput, zodDetails } from '../../../shared/schemas/validation.ts';
import { pagination } from '../../../shared/schemas/common.ts';
import { parseConditions } from '../../../shared/schemas/rule-conditions.ts';
import { ruleCreateSchema, ruleListQuerySchema, ruleUpdateSchema } from '../../../shared/schemas/rule.ts';
import { principalOf, type RequireScope } from '../middleware/auth.ts';
import { bodyOf } from '../middleware/json-body.ts';
import { created, ok, okList } from '../respond.ts';
import type { RuleStore } from '../stores/rule-store.ts';
import type { Rule } from '../../../shared/schemas/rule.ts';

export interface RuleRouteDeps {
  rules: RuleStore;
  requireScope: RequireScope;
  /** Called after every committed change to a rule (snapshot updates hang here). */
  onRuleChanged(rule: Rule): Promise<void>;
}

const ruleNotFound = () => new AppError('NOT_FOUND', 'Rule not found');

/** Reading rules needs `links:read`; changing them `rules:write`. */
export function ruleRoutes(router: Router, deps: RuleRouteDeps): void {
  const { rules, requireScope } = deps;

  router.get('/rules', requireScope('links:read'), async (ctx) => {
    const query = parseInput(ruleListQuerySchema, ctx.query, 'query');
    const { items, total } = await rules.list(principalOf(ctx).workspaceId, query);
    okList(ctx, items, pagination(query.page, query.limit, total));
  });

  router.post('/rules', requireScope('rules:write'), async (ctx) => {
    const input = parseInput(ruleCreateSchema, await bodyOf(ctx), 'rule');
    const rule = await rules.create(principalOf(ctx).workspaceId, input);
    await deps.onRuleChanged(rule);
    created(ctx, rule);
  });

  router.get('/rules/:id', requireScope('links:read'), async (ctx) => {
    const rule = await rules.get(principalOf(ctx).workspaceId, ctx.params.id!);
    if (!rule) throw ruleNotFound();
    ok(ctx, rule);
  });

  router.patch('/rules/:id', requireScope('rules:write'), async (ctx) => {
    const changes = parseInput(ruleUpdateSchema, await bodyOf(ctx), 'rule update');
    const { type: _type, linkId: _linkId, campaignId: _campaignId, conditions, ...rest } = changes;
    const rule = await rules.update(
      principalOf(ctx).workspaceId,
      ctx.params.id!,
      { ...rest, ...(conditions !== undefined ? { conditions: conditions as Record<string, unknown> } : {}) },
      (type, input) => {
        const parsed = parseConditions(type, input);
        if (!parsed.success) {
          throw new AppError('VALIDATION_ERROR', 'Invalid rule update', zodDetails(parsed.error).map((d) => ({ ...d, path: d.path === '(root)' ? 'conditions' : `conditions.${d.path}` })));
        }
        return parsed.data as Record<string, unknown>;
      },
    );
    await deps.onRuleChanged(rule);
    ok(ctx, rule);
  });

  router.delete('/rules/:id', requireScope('rules:write'), async (ctx) => {
    const rule = await rules.delete(principalOf(ctx).workspaceId, ctx.params.id!);
    if (!rule) throw ruleNotFound();
    await deps.onRuleChanged(rule);
    ok(ctx, { id: rule.id, deleted: true });
  });
}
