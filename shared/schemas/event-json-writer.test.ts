import { describe, expect, it } from 'vitest';
import { sampleClickEvent } from '../testing/click-event-fixture.ts';
import { clickEventFields, clickEventSchema, type ClickEvent } from './click-event.ts';
import { eventEpochMs } from './common.ts';
import { eventJsonWriter } from './event-json-writer.ts';

const write = eventJsonWriter(clickEventFields);
const keys = Object.keys(clickEventFields) as (keyof ClickEvent)[];
/** What the writer must write: JSON.stringify of the declared keys, in declaration order. */
const inOrder = (event: Record<string, unknown>) => JSON.stringify(Object.fromEntries(keys.map((k) => [k, event[k]])));

describe('eventJsonWriter', () => {
  it('writes exactly what JSON.stringify writes for the event with its keys in declaration order', () => {
    const events = [
      sampleClickEvent(),
      sampleClickEvent({ id: 'ck_abc', kind: 'impression', ts: 1_790_000_000_123, country: 'DE', region: 'Bayern', city: 'München', os: 'ios', browser: 'Mobile Safari', bot: true }),
      sampleClickEvent({ referrerHost: 'news.example', utmSource: 'news letter', utmMedium: 'e"mail', utmCampaign: 'back\\slash', utmTerm: 'tab\there\nnewline\u0000nul\u001f', utmContent: '😀 ok', ruleId: 'rl_1', destination: 'https://example.com/?a=1&b=<2>' }),
      sampleClickEvent({ utmSource: 'lone \ud800 high', utmMedium: 'lone \udc00 low', utmTerm: '\u2028\u2029', ts: -0, destination: '' }),
      // The last instant the event tables hold: the longest time a click carries.
      sampleClickEvent({ ts: eventEpochMs.max, source: 'qr', deviceClass: 'tablet' }),
    ];
    for (const event of events) {
      expect(write(event)).toBe(inOrder(event));
      expect(clickEventSchema.parse(JSON.parse(write(event)))).toEqual({ ...event, ts: event.ts === 0 ? 0 : event.ts });
    }
  });

  it('writes the declaration order whatever order the object holds its keys in, and no key outside the declaration', () => {
    const event = sampleClickEvent({ country: 'FR', bot: true });
    const shuffled = { extra: 'not written', ...Object.fromEntries(Object.entries(event).reverse()) } as unknown as ClickEvent;
    expect(write(shuffled)).toBe(inOrder(event));
    expect(Object.keys(JSON.parse(write(shuffled)) as object)).toEqual(keys);
  });

  it('writes a value of the wrong type as JSON still, which the ingester then refuses', () => {
    const wrong = [
      { ts: Number.NaN },
      { ts: '12' },
      { bot: 'yes' },
      { bot: undefined },
      { id: 42 },
      { country: { code: 'DE' } },
      { kind: 'click"' },
      { linkId: undefined },
    ];
    for (const fields of wrong) {
      const line = write(sampleClickEvent(fields as Partial<ClickEvent>));
      const parsed = JSON.parse(line) as Record<string, unknown>;
      expect(Object.keys(parsed)).toEqual(keys);
      expect(clickEventSchema.safeParse(parsed).success).toBe(false);
    }
  });

  it('throws, as JSON.stringify does, for a value JSON cannot hold', () => {
    expect(() => write(sampleClickEvent({ ts: 10n as unknown as number }))).toThrow(TypeError);
  });
});
