import type Router from '@koa/router';
import { AppError } from '../../../shared/errors.ts';
import { pagination } from '../../../shared/schemas/common.ts';
import { parseInput } from '../../../shared/schemas/validation.ts';
import {
  webhookCreateSchema,
  webhookDeliveryListQuerySchema,
  webhookListQuerySchema,
  webhookUpdateSchema,
  type Webhook,
} from '../../../shared/schemas/webhook.ts';
import { newSigningSecret, sealSigningSecret } from '../../../shared/webhooks/signing-secret.ts';
import { blockedUrlReason } from '../../../shared/webhooks/target-address.ts';
import { principalOf, type RequireScope } from '../middleware/auth.ts';
import { markResponseHoldsSecret } from '../middleware/idempotency.ts';
import { bodyOf } from '../middleware/json-body.ts';
import { created, ok, okList } from '../respond.ts';
import type { WebhookStore } from '../stores/webhook-store.ts';

export interface WebhookRouteDeps {
  webhooks: WebhookStore;
  requireScope: RequireScope;
  /** Seals signing secrets (LINKROUTE_SECRET); absent: creating endpoints answers 503. */
  secret?: Buffer | undefined;
  /** Private, loopback and metadata targets allowed (tests, private deployments). */
  allowPrivateTargets: boolean;
  /** Called after a test event is queued, to publish it at once. */
  onEventQueued(): Promise<void>;
}

const notFound = () => new AppError('NOT_FOUND', 'Webhook not found');

/**
 * Webhook endpoints: where, and which events. Delivery is the webhooks service's
 * (services/webhooks); this is the management side. All of it needs `webhooks:write`.
 */
export function webhookRoutes(router: Router, deps: WebhookRouteDeps): void {
  const { webhooks, requireScope } = deps;
  const scope = requireScope('webhooks:write');

  function checkTarget(url: string | undefined): void {
    if (url === undefined || deps.allowPrivateTargets) return;
    const reason = blockedUrlReason(url);
    if (reason) throw new AppError('VALIDATION_ERROR', 'Invalid webhook', [{ path: 'url', message: `must be a public address, not ${reason}` }]);
  }

  router.post('/webhooks', scope, async (ctx) => {
    const input = parseInput(webhookCreateSchema, await bodyOf(ctx), 'webhook');
    checkTarget(input.url);
    if (!deps.secret) throw new AppError('SERVICE_UNAVAILABLE', 'Webhooks need LINKROUTE_SECRET to seal signing secrets');
    const secret = newSigningSecret();
    const webhook = await webhooks.create(principalOf(ctx).workspaceId, { ...input, sealedSecret: sealSigningSecret(deps.secret, secret) });
    // An Idempotency-Key replay shows it again, so it is kept only sealed (middleware/idempotency.ts).
    markResponseHoldsSecret(ctx);
    created(ctx, { ...webhook, secret });
  });

  router.get('/webhooks', scope, async (ctx) => {
    const query = parseInput(webhookListQuerySchema, ctx.query, 'query');
    const { items, total } = await webhooks.list(principalOf(ctx).workspaceId, query);
    okList(ctx, items, pagination(query.page, query.limit, total));
  });

  router.get('/webhooks/:id', scope, async (ctx) => {
    ok(ctx, (await webhooks.get(principalOf(ctx).workspaceId, ctx.params.id!)) ?? notFoundThrow());
  });

  router.patch('/webhooks/:id', scope, async (ctx) => {
    const changes = parseInput(webhookUpdateSchema, await bodyOf(ctx), 'webhook update');
    checkTarget(changes.url);
    ok(ctx, (await webhooks.update(principalOf(ctx).workspaceId, ctx.params.id!, changes)) ?? notFoundThrow());
  });

  router.delete('/webhooks/:id', scope, async (ctx) => {
    if (!(await webhooks.delete(principalOf(ctx).workspaceId, ctx.params.id!))) throw notFound();
    ok(ctx, { id: ctx.params.id, deleted: true });
  });

  router.post('/webhooks/:id/test', scope, async (ctx) => {
    const workspaceId = principalOf(ctx).workspaceId;
    requireEnabled((await webhooks.get(workspaceId, ctx.params.id!)) ?? notFoundThrow(), 'tests included');
    const eventId = await webhooks.queueTest(workspaceId, ctx.params.id!);
    await deps.onEventQueued();
    ok(ctx, { eventId }, 202);
  });

  router.get('/webhooks/:id/deliveries', scope, async (ctx) => {
    const query = parseInput(webhookDeliveryListQuerySchema, ctx.query, 'query');
    const workspaceId = principalOf(ctx).workspaceId;
    if (!(await webhooks.get(workspaceId, ctx.params.id!))) throw notFound();
    const { items, total } = await webhooks.deliveries(workspaceId, ctx.params.id!, query);
    okList(ctx, items, pagination(query.page, query.limit, total));
  });

  router.get('/webhooks/:id/deliveries/:deliveryId', scope, async (ctx) => {
    const workspaceId = principalOf(ctx).workspaceId;
    if (!(await webhooks.get(workspaceId, ctx.params.id!))) throw notFound();
    ok(ctx, (await webhooks.delivery(workspaceId, ctx.params.id!, ctx.params.deliveryId!)) ?? deliveryNotFoundThrow());
  });

  router.post('/webhooks/:id/deliveries/:deliveryId/retry', scope, async (ctx) => {
    const workspaceId = principalOf(ctx).workspaceId;
    requireEnabled((await webhooks.get(workspaceId, ctx.params.id!)) ?? notFoundThrow(), 'retries included');
    const resent = (await webhooks.retryDelivery(workspaceId, ctx.params.id!, ctx.params.deliveryId!)) ?? deliveryNotFoundThrow();
    if (resent === 'pending') throw new AppError('CONFLICT', 'Webhook delivery is pending: it is queued already (see its nextAttemptAt); retry a delivery once it has succeeded or failed');
    ok(ctx, resent, 202);
  });

  /** The sender gives up every delivery to a disabled endpoint: one queued now would go nowhere. */
  function requireEnabled(webhook: Webhook, what: string): void {
    if (webhook.enabled) return;
    const why = webhook.disabledReason === 'failing' ? 'its deliveries failed for 24 h' : 'disabled by PATCH enabled: false';
    throw new AppError('WEBHOOK_DISABLED', `Webhook endpoint is disabled (${why}) and gets no deliveries, ${what}: enable it first with PATCH /webhooks/${webhook.id} {"enabled": true}`);
  }

  function deliveryNotFoundThrow(): never {
    throw new AppError('NOT_FOUND', 'Webhook delivery not found');
  }

  function notFoundThrow(): never {
    throw notFound();
  }
}
