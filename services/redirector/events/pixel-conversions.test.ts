import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Bus } from '../../../shared/bus/bus.ts';
import { createClickId } from '../../../shared/click-id.ts';
import { newId } from '../../../shared/ids.ts';
import { createLogger } from '../../../shared/logger.ts';
import type { ConversionEvent } from '../../../shared/schemas/conversion.ts';
import { parsePixelConversion, type PixelConversion } from '../serving/pixel.ts';
import type { SnapshotStore } from '../snapshot/snapshot-store.ts';
import { pixelConversions } from './pixel-conversions.ts';

const secret = randomBytes(32);
const link = { id: newId('link'), workspaceId: newId('workspace'), campaignId: newId('campaign') };

/** Pixel queries as the redirector parses them, recorded onto a bus that keeps what it is given. */
function harness() {
  const published: ConversionEvent[] = [];
  const bus = { publishEvent: async (_subject: string, data: Uint8Array) => void published.push(JSON.parse(new TextDecoder().decode(data))) } as unknown as Bus;
  const store = { findById: (id: string) => (id === link.id ? { compiled: link } : undefined) } as unknown as SnapshotStore;
  const conversions = pixelConversions({ bus, store, secret, logger: createLogger('test', 'silent') });
  const clickId = createClickId(secret, link.id, Date.now());
  const fire = (extra: string) => conversions.record(parsePixelConversion(secret, `clickId=${clickId}&${extra}`, 1_000_000) as PixelConversion);
  return { published, conversions, fire };
}

describe('pixelConversions', () => {
  it('publishes the value as stored: at most 4 decimal places, and 0 when its currency is no ISO 4217 code (never USD)', async () => {
    const { published, conversions, fire } = harness();
    fire('event=purchase&value=10.0001&currency=bhd&orderId=A-1');
    fire('event=purchase&value=49.95&currency=EURO&orderId=A-2');
    fire('event=purchase&value=0.000099&currency=EUR&orderId=A-3');
    await conversions.close();
    expect(published.map(({ value, currency, orderId }) => ({ value, currency, orderId }))).toEqual([
      { value: 10.0001, currency: 'BHD', orderId: 'A-1' },
      { value: 0, currency: 'USD', orderId: 'A-2' },
      { value: 0, currency: 'EUR', orderId: 'A-3' },
    ]);
  });

  it('counts the malformed fields it dropped, by field, for the metric', async () => {
    const { conversions, fire } = harness();
    fire('value=49.95&currency=EURO');
    fire('value=1.123456&orderId=caf%C3%A9');
    fire('value=5&currency=EUR&orderId=ok');
    await conversions.close();
    expect(conversions.stats()).toMatchObject({ published: 3, fieldsDropped: { value: 1, currency: 1, orderId: 1 } });
  });
});
