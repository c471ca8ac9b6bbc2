import type { Sql } from '../../shared/db/postgres.ts';

/**
 * A publish to the bus gives up within its timeout (5 s, bus.ts), and the request then
 * releases its claim; a claim unpublished for longer than this was left by a request
 * that died between claiming and publishing.
 */
export const ABANDONED_CLAIM_MS = 30_000;

/** What a postback's order id names: its conversion's id and attribution. */
export interface OrderConversion {
  conversionId: string;
  linkId: string;
  campaignId: string;
  attributed: boolean;
}

export type OrderClaim =
  /** Ours: publish `conversion`, then markPublished. */
  | { kind: 'claimed'; conversion: OrderConversion }
  /** An abandoned claim, now ours: publish its conversion (same id, so a copy that did reach the bus counts once), then markPublished. */
  | { kind: 'taken_over'; conversion: OrderConversion }
  /** Recorded before: answer it as the duplicate it is. */
  | { kind: 'published'; conversion: OrderConversion }
  /** Another request is recording it right now. */
  | { kind: 'in_flight' };

/**
 * The order ids of s2s postbacks (a repeated one is the same conversion, recorded once),
 * claimed in Postgres so that every API instance agrees. A claim is published or
 * released by the request that made it; one whose request died is taken over by the
 * next retry after ABANDONED_CLAIM_MS.
 */
export function conversionOrders(sql: Sql) {
  const order = (workspaceId: string, orderId: string) => sql`workspace_id = ${workspaceId} AND order_id = ${orderId}`;

  return {
    async claim(workspaceId: string, orderId: string, fresh: OrderConversion): Promise<OrderClaim> {
      const [claimed] = await sql`
        INSERT INTO conversion_orders (workspace_id, order_id, conversion_id, link_id, campaign_id, attributed, unpublished_since)
        VALUES (${workspaceId}, ${orderId}, ${fresh.conversionId}, ${fresh.linkId}, ${fresh.campaignId}, ${fresh.attributed}, now())
        ON CONFLICT (workspace_id, order_id) DO NOTHING RETURNING conversion_id`;
      if (claimed) return { kind: 'claimed', conversion: fresh };
      // One statement decides who takes an abandoned claim, however many instances retry at once.
      const [abandoned] = await sql<OrderConversion[]>`
        UPDATE conversion_orders SET unpublished_since = now()
        WHERE ${order(workspaceId, orderId)} AND unpublished_since < now() - make_interval(secs => ${ABANDONED_CLAIM_MS / 1000})
        RETURNING conversion_id, link_id, campaign_id, attributed`;
      if (abandoned) return { kind: 'taken_over', conversion: abandoned };
      const [first] = await sql<Array<OrderConversion & { unpublished: boolean }>>`
        SELECT conversion_id, link_id, campaign_id, attributed, unpublished_since IS NOT NULL AS unpublished FROM conversion_orders WHERE ${order(workspaceId, orderId)}`;
      // Gone since the insert: released by a request whose publish failed; a retry claims it afresh.
      if (!first || first.unpublished) return { kind: 'in_flight' };
      const { unpublished: _unpublished, ...conversion } = first;
      return { kind: 'published', conversion };
    },

    async markPublished(workspaceId: string, orderId: string, conversionId: string): Promise<void> {
      await sql`UPDATE conversion_orders SET unpublished_since = NULL WHERE ${order(workspaceId, orderId)} AND conversion_id = ${conversionId}`;
    },

    /** The conversion was not recorded: the order id is free for the postback's retry. */
    async release(workspaceId: string, orderId: string, conversionId: string): Promise<void> {
      await sql`DELETE FROM conversion_orders WHERE ${order(workspaceId, orderId)} AND conversion_id = ${conversionId} AND unpublished_since IS NOT NULL`;
    },
  };
}
