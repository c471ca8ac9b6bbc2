import { describe, expect, it } from 'vitest';
import { CLICK_EVENT_KEYS, clickEventSchema, type ClickEvent } from './click-event.ts';
import { clickEventJson } from './click-event-json.ts';

/** An event with its keys in declaration order, as serve-link builds them. */
function event(overrides: Partial<ClickEvent> = {}): ClickEvent {
  const base: ClickEvent = {
    id: 'ck_AQGak2Pv3wABAgMEBQZCRU5DSDAwMDAwMDAwMDAwMDEyMzQ1MOy6CeIA0wbt8vMPeA',
    kind: 'click',
    ts: 1_763_790_000_123,
    workspaceId: 'ws_0123456789abcdefghijkl',
    linkId: 'link_BENCH00000000000012345',
    campaignId: 'cmp_0123456789abcdefghijk',
    visitorId: 'abcdefghijklmnopqrstuv',
    country: 'DE',
    region: 'Bavaria',
    city: 'Munich',
    deviceClass: 'mobile',
    os: 'ios',
    browser: 'Mobile Safari',
    referrerHost: 'news.example.org',
    utmSource: 'newsletter',
    utmMedium: 'email',
    utmCampaign: 'spring',
    utmTerm: 'shoes',
    utmContent: 'hero',
    source: 'link',
    ruleId: 'rule_0123456789abcdefghijk',
    destination: 'https://example.com/landing/12345?ref=bench',
    bot: false,
  };
  const out = { ...base };
  for (const key of CLICK_EVENT_KEYS) if (key in overrides) (out as Record<string, unknown>)[key] = overrides[key];
  return out;
}

/** Strings JSON.stringify must escape (or must not), to compare both ways. */
const awkward = [
  '',
  'say "hi"',
  'back\\slash',
  'line\nbreak\r\ttab',
  '\u0000\u0001\u001f\u007f',
  'caf\u00e9 \u4e2d\u6587 \u{1f600}',
  'lone \ud800 surrogate',
  'lone \udc00 low',
  'pair \ud83d\ude00 ok',
  '\u2028\u2029',
  '</script>',
  'x'.repeat(500),
];

describe('clickEventJson', () => {
  it('writes every schema key, in the schema order', () => {
    expect([...CLICK_EVENT_KEYS]).toEqual(Object.keys(clickEventSchema.shape));
  });

  it('is JSON.stringify for a typical event, and parses back to it', () => {
    const e = event();
    expect(clickEventJson(e)).toBe(JSON.stringify(e));
    expect(clickEventSchema.parse(JSON.parse(clickEventJson(e)))).toEqual(e);
  });

  it('is JSON.stringify with every nullable field null, for impressions, QR and bots', () => {
    const e = event({
      kind: 'impression',
      country: null,
      region: null,
      city: null,
      os: null,
      browser: null,
      referrerHost: null,
      utmSource: null,
      utmMedium: null,
      utmCampaign: null,
      utmTerm: null,
      utmContent: null,
      source: 'qr',
      ruleId: null,
      destination: null,
      bot: true,
    });
    expect(clickEventJson(e)).toBe(JSON.stringify(e));
    expect(clickEventSchema.parse(JSON.parse(clickEventJson(e)))).toEqual(e);
  });

  const stringKeys = CLICK_EVENT_KEYS.filter((key) => typeof event()[key] === 'string');
  it.each(stringKeys)('escapes %s exactly as JSON.stringify', (key) => {
    for (const value of awkward) {
      const e = event({ [key]: value });
      const json = clickEventJson(e);
      expect(json).toBe(JSON.stringify(e));
      expect(json).not.toContain('\n');
      expect(JSON.parse(json)[key]).toBe(JSON.parse(JSON.stringify(value)));
    }
  });

  it('formats timestamps as JSON.stringify does', () => {
    for (const ts of [0, 1, -1, 2 ** 48 - 1, Number.MAX_SAFE_INTEGER, 1e21, -0]) {
      const e = event({ ts });
      expect(clickEventJson(e)).toBe(JSON.stringify(e));
    }
  });

  it('falls back to JSON.stringify for values of the wrong type, so the line is always valid JSON', () => {
    const broken: Array<Record<string, unknown>> = [
      { ts: Number.NaN },
      { ts: Number.POSITIVE_INFINITY },
      { ts: '1' },
      { bot: 'false' },
      { country: undefined },
      { utmSource: 42 },
      { destination: { href: 'x' } },
      { id: undefined },
    ];
    for (const overrides of broken) {
      const e = event(overrides as Partial<ClickEvent>);
      const json = clickEventJson(e);
      expect(json).toBe(JSON.stringify(e));
      expect(() => JSON.parse(json)).not.toThrow();
    }
  });

  it('leaves out keys the schema does not have (the ingester would strip them)', () => {
    const e = { ...event(), extra: 'not in the schema' } as ClickEvent;
    const { extra: _extra, ...known } = e as ClickEvent & { extra: string };
    expect(clickEventJson(e)).toBe(JSON.stringify(known));
  });

  it('matches JSON.stringify on many generated events', () => {
    let seed = 1;
    const pick = <T,>(values: readonly T[]): T => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return values[seed % values.length]!;
    };
    for (let i = 0; i < 2_000; i++) {
      const e = event({
        country: pick(['US', 'DE', null]),
        region: pick(['California', null, ...awkward]),
        city: pick(['San José', null]),
        os: pick(['ios', 'android', 'windows', 'macos', 'linux', null] as const),
        deviceClass: pick(['mobile', 'tablet', 'desktop'] as const),
        browser: pick(['Chrome', 'Mobile Safari', null, ...awkward]),
        referrerHost: pick([null, 'a.example', ...awkward]),
        utmSource: pick([null, ...awkward]),
        utmContent: pick([null, ...awkward]),
        destination: pick([null, 'https://example.com/?q="x"', 'https://example.com/caf\u00e9']),
        bot: pick([true, false]),
        ts: 1_700_000_000_000 + i,
      });
      expect(clickEventJson(e)).toBe(JSON.stringify(e));
    }
  });
});
