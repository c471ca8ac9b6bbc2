import { describe, expect, it } from 'vitest';
import type { ClickEvent } from '../../shared/schemas/click-event.ts';
import { EVENT_ROW_SOURCES, toEventRow } from './event-row.ts';

describe('EVENT_ROW_SOURCES', () => {
  it('is the mapping toEventRow applies, null becoming an empty string', () => {
    const full: ClickEvent = {
      id: 'ck_1',
      kind: 'impression',
      ts: 123,
      workspaceId: 'ws',
      linkId: 'l',
      campaignId: 'c',
      visitorId: 'v',
      country: 'DE',
      deviceClass: 'tablet',
      os: 'linux',
      browser: 'b',
      referrerHost: 'r',
      utmSource: 'us',
      utmMedium: 'um',
      utmCampaign: 'uc',
      utmTerm: 'ut',
      utmContent: 'uco',
      source: 'qr',
      ruleId: 'rule',
      destination: 'd',
      bot: true,
    };
    const empty: ClickEvent = { ...full, country: null, os: null, browser: null, referrerHost: null, utmSource: null, utmMedium: null, utmCampaign: null, utmTerm: null, utmContent: null, ruleId: null, destination: null };
    for (const event of [full, empty]) {
      const expected = Object.fromEntries(Object.entries(EVENT_ROW_SOURCES).map(([column, key]) => [column, event[key] ?? '']));
      expect(toEventRow(event)).toEqual(expected);
    }
  });
});
