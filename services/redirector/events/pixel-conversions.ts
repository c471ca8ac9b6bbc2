import type { Bus } from '../../../shared/bus/bus.ts';
import { verifyClickId } from '../../../shared/click-id.ts';
import { newId } from '../../../shared/ids.ts';
import { pixelConversionId } from '../../../shared/conversion-id.ts';
import { errorFields, type Logger } from '../../../shared/logger.ts';
import { eventSubjects } from '../../../shared/schemas/click-event.ts';
import { isAttributed, type ConversionEvent } from '../../../shared/schemas/conversion.ts';
import type { DroppedField, PixelConversion } from '../serving/pixel.ts';
import type { SnapshotStore } from '../snapshot/snapshot-store.ts';

export interface PixelConversionStats {
  published: number;
  pending: number;
  /** Conversions lost because MAX_PENDING were waiting. */
  dropped: number;
  /** Malformed fields of recorded conversions, dropped (pixel.ts), so operators see a shop sending them. */
  fieldsDropped: Record<DroppedField, number>;
}

export interface PixelConversions {
  record(input: PixelConversion): void;
  stats(): PixelConversionStats;
  close(timeoutMs?: number): Promise<void>;
}

const MAX_PENDING = 10_000;
const encoder = new TextEncoder();

/**
 * Conversion-pixel hits become conversion events on the bus, like s2s postbacks.
 * The pixel answers at once; publishing happens after, retried (same message id,
 * so never doubled) while the bus is away, up to MAX_PENDING waiting, beyond
 * which they are counted as dropped. Repeats of one orderId are folded by the
 * reports (the redirector has no database to refuse them).
 */
export function pixelConversions(deps: { bus: Bus; store: SnapshotStore; secret: Buffer; logger: Logger; now?: () => number }): PixelConversions {
  const now = deps.now ?? Date.now;
  const pending: ConversionEvent[] = [];
  const stats = { published: 0, dropped: 0 };
  const fieldsDropped: Record<DroppedField, number> = { value: 0, currency: 0, orderId: 0 };
  let pumping: Promise<void> | null = null;
  let closed = false;

  async function pump(): Promise<void> {
    let backoffMs = 100;
    while (pending.length > 0) {
      const event = pending[0]!;
      try {
        await deps.bus.publishEvent(eventSubjects.conversions, encoder.encode(JSON.stringify(event)), event.id);
        pending.shift();
        stats.published++;
        backoffMs = 100;
      } catch (err) {
        if (closed) return;
        deps.logger.warn('pixel conversion not published yet; retrying', { pending: pending.length, ...errorFields(err) });
        await new Promise((r) => setTimeout(r, backoffMs));
        backoffMs = Math.min(5_000, backoffMs * 2);
      }
    }
  }

  return {
    record(input) {
      const click = verifyClickId(deps.secret, input.clickId);
      const link = deps.store.findById(input.linkId)?.compiled;
      if (!click || !link) return;
      if (pending.length >= MAX_PENDING) {
        stats.dropped++;
        return;
      }
      for (const field of input.dropped ?? []) fieldsDropped[field]++;
      const at = now();
      pending.push({
        id: input.orderId === null ? pixelConversionId(input.clickId, input.event) : newId('conversion'),
        clickId: input.clickId,
        workspaceId: link.workspaceId,
        linkId: link.id,
        campaignId: link.campaignId,
        event: input.event,
        // No value (none sent, or dropped as malformed, with its currency's) is 0: it adds nothing to revenue in the default currency.
        value: input.value ?? 0,
        currency: input.currency ?? 'USD',
        orderId: input.orderId,
        ts: at,
        attributed: isAttributed(at, click.timestamp),
        source: 'pixel',
      });
      pumping ??= pump().finally(() => (pumping = null));
    },
    stats: () => ({ ...stats, pending: pending.length, fieldsDropped: { ...fieldsDropped } }),
    async close(timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      while (pending.length > 0 && Date.now() < deadline) await (pumping ?? new Promise((r) => setTimeout(r, 20)));
      closed = true;
    },
  };
}
