import type Router from '@koa/router';
import type { Bus } from '../../../shared/bus/bus.ts';
import { isNatsFailure } from '../../../shared/bus/jetstream-errors.ts';
import { verifyClickId } from '../../../shared/click-id.ts';
import { AppError } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import { eventSubjects } from '../../../shared/schemas/click-event.ts';
import { isAttributed, conversionS2sSchema, type ConversionEvent } from '../../../shared/schemas/conversion.ts';
import { parseInput } from '../../../shared/schemas/validation.ts';
import { principalOf, type RequireScope } from '../middleware/auth.ts';
import { bodyOf } from '../middleware/json-body.ts';
import { created, ok } from '../respond.ts';

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
 * the caller's workspace. A repeated orderId answers the first conversion.
 */
export function conversionRoutes(router: Router, deps: ConversionRouteDeps): void {
  router.post('/conversions/s2s', deps.requireScope('conversions:write'), async (ctx) => {
    const input = parseInput(conversionS2sSchema, await bodyOf(ctx), 'conversion');
    if (!deps.bus || !deps.secret) throw new AppError('SERVICE_UNAVAILABLE', 'Conversions need the event bus and LINKROUTE_SECRET');
    const workspaceId = principalOf(ctx).workspaceId;
    const click = verifyClickId(deps.secret, input.clickId);
    if (!click) throw clickNotFound();
    const [link] = await deps.sql<{ campaignId: string }[]>`SELECT campaign_id FROM links WHERE id = ${click.linkId} AND workspace_id = ${workspaceId}`;
    if (!link) throw clickNotFound();

    const at = input.timestamp ? Date.parse(input.timestamp) : Date.now();
    // Within 30 days after the click (a little clock skew before it is tolerated).
    const attributed = isAttributed(at, click.timestamp);
    const conversionId = newId('conversion');

    if (input.orderId !== undefined) {
      const [claimed] = await deps.sql`
        INSERT INTO conversion_orders (workspace_id, order_id, conversion_id, link_id, campaign_id, attributed)
        VALUES (${workspaceId}, ${input.orderId}, ${conversionId}, ${click.linkId}, ${link.campaignId}, ${attributed})
        ON CONFLICT (workspace_id, order_id) DO NOTHING RETURNING conversion_id`;
      if (!claimed) {
        const [first] = await deps.sql<{ conversionId: string; linkId: string; campaignId: string; attributed: boolean }[]>`
          SELECT conversion_id, link_id, campaign_id, attributed FROM conversion_orders
          WHERE workspace_id = ${workspaceId} AND order_id = ${input.orderId}`;
        ok(ctx, { ...first!, duplicate: true });
        return;
      }
    }

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
      await deps.bus.publishEvent(eventSubjects.conversions, encoder.encode(JSON.stringify(event)), conversionId);
    } catch (err) {
      if (!isNatsFailure(err)) throw err;
      // Not recorded: release the order id so the postback's retry records it.
      if (input.orderId !== undefined) await deps.sql`DELETE FROM conversion_orders WHERE workspace_id = ${workspaceId} AND order_id = ${input.orderId} AND conversion_id = ${conversionId}`;
      throw new AppError('SERVICE_UNAVAILABLE', 'The conversion could not be recorded right now; retry');
    }
    created(ctx, { conversionId, attributed, linkId: click.linkId, campaignId: link.campaignId, duplicate: false });
  });
}
