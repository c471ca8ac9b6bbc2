import type Router from '@koa/router';
import type { Bus } from '../../../shared/bus/bus.ts';
import { isNatsFailure } from '../../../shared/bus/jetstream-errors.ts';
import { verifyClickId } from '../../../shared/click-id.ts';
import { AppError } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import { eventSubjects } from '../../../shared/schemas/click-event.ts';
import { CLOCK_SKEW_MS, isAttributed, conversionS2sSchema, type ConversionEvent } from '../../../shared/schemas/conversion.ts';
import { parseInput } from '../../../shared/schemas/validation.ts';
import { principalOf, type RequireScope } from '../middleware/auth.ts';
import { bodyOf } from '../middleware/json-body.ts';
import { created, ok } from '../respond.ts';
import { conversionOrders, type OrderConversion } from '../conversion-orders.ts';

export interface ConversionRouteDeps {
  sql: Sql;
  requireScope: RequireScope;
  /** The bus conversions travel on to the ingester; absent: the endpoint answers 503. */
  bus?: Bus | undefined;
  /** Verifies click ids (LINKROUTE_SECRET); absent: the endpoint answers 503. */
  secret?: Buffer | undefined;
}

const encoder = new TextEncoder();
const clickNotFound = () => new AppError('NOT_FOUND', 'Click not found');

/**
 * POST /conversions/s2s: a server-to-server postback. The click id is checked by
 * its MAC (no lookup: a forged id is a 404 at once), then must name a link of
 * the caller's workspace. A repeated orderId answers the first conversion
 * (conversion-orders.ts: one claimed by a request that died unpublished is recorded
 * by the retry that takes it over).
 */
export function conversionRoutes(router: Router, deps: ConversionRouteDeps): void {
  const orders = conversionOrders(deps.sql);
  router.post('/conversions/s2s', deps.requireScope('conversions:write'), async (ctx) => {
    const input = parseInput(conversionS2sSchema, await bodyOf(ctx), 'conversion');
    if (!deps.bus || !deps.secret) throw new AppError('SERVICE_UNAVAILABLE', 'Conversions need the event bus and LINKROUTE_SECRET');
    const workspaceId = principalOf(ctx).workspaceId;
    const click = verifyClickId(deps.secret, input.clickId);
    if (!click) throw clickNotFound();
    const [link] = await deps.sql<{ campaignId: string }[]>`SELECT campaign_id FROM links WHERE id = ${click.linkId} AND workspace_id = ${workspaceId}`;
    if (!link) throw clickNotFound();

    const at = input.timestamp ? Date.parse(input.timestamp) : Date.now();
    // A conversion cannot come before its click (clock skew aside). Also keeps one batch of
    // conversions within the months since the clicks: ClickHouse refuses an insert that
    // spans over 100 monthly partitions, which backdated postbacks could otherwise force.
    if (at < click.timestamp - CLOCK_SKEW_MS) {
      throw new AppError('VALIDATION_ERROR', 'Invalid conversion', [{ path: 'timestamp', message: `before its click (${new Date(click.timestamp).toISOString()})` }]);
    }
    const fresh: OrderConversion = {
      conversionId: newId('conversion'),
      linkId: click.linkId,
      campaignId: link.campaignId,
      // Within 30 days after the click (a little clock skew before it is tolerated).
      attributed: isAttributed(at, click.timestamp),
    };
    const claim = input.orderId === undefined ? ({ kind: 'claimed', conversion: fresh } as const) : await orders.claim(workspaceId, input.orderId, fresh);
    if (claim.kind === 'published') {
      ok(ctx, { ...claim.conversion, duplicate: true });
      return;
    }
    if (claim.kind === 'in_flight') {
      throw new AppError('CONFLICT', `A conversion with orderId "${input.orderId}" is being recorded by another request; retry in a few seconds`);
    }
    const { conversionId, attributed } = claim.conversion;

    const event: ConversionEvent = {
      id: conversionId,
      clickId: input.clickId,
      workspaceId,
      linkId: click.linkId,
      campaignId: link.campaignId,
      event: input.event,
      value: input.value,
      currency: input.currency,
      orderId: input.orderId ?? null,
      ts: at,
      attributed,
      source: 's2s',
    };
    try {
      // The message id is the conversion id: a taken-over claim whose first publish did reach the bus is dropped there as a duplicate.
      await deps.bus.publishEvent(eventSubjects.conversions, encoder.encode(JSON.stringify(event)), conversionId);
    } catch (err) {
      if (!isNatsFailure(err)) throw err;
      // Not recorded: release the order id so the postback's retry records it.
      if (input.orderId !== undefined) await orders.release(workspaceId, input.orderId, conversionId);
      throw new AppError('SERVICE_UNAVAILABLE', 'The conversion could not be recorded right now; retry');
    }
    if (input.orderId !== undefined) await orders.markPublished(workspaceId, input.orderId, conversionId);
    created(ctx, { conversionId, attributed, linkId: click.linkId, campaignId: link.campaignId, duplicate: false });
  });
}
