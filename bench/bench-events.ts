/**
 * The click events of bench/before-after.ts's backlog drains (the ingest suite draws
 * realistic ones of its own): deterministic, plain ASCII, keys in
 * declaration order, a mix of kinds, countries, devices and empty fields (a field not
 * named here is empty, see sampleClickEvent).
 */
import type { ClickEvent } from '../shared/schemas/click-event.ts';
import { sampleClickEvent } from '../shared/testing/click-event-fixture.ts';

const countries = ['US', 'DE', 'GB', 'FR', 'IN', 'BR', 'JP', null];
const devices = ['desktop', 'mobile', 'tablet'] as const;

/** Event `i` of benchmark run `run` (its ids start `ck_<run>_`), clicked at `ts`. */
export function makeEvent(i: number, run: string, ts: number): ClickEvent {
  return sampleClickEvent({
    id: `ck_${run}_${i}`,
    kind: i % 10 === 0 ? 'impression' : 'click',
    ts,
    workspaceId: `ws_bench_${i % 10}`,
    linkId: `link_${run}_${i % 10_000}`,
    campaignId: `campaign_${i % 100}`,
    visitorId: `v${i % 50_000}`,
    country: countries[i % countries.length]!,
    region: i % 3 ? 'Bavaria' : null,
    city: i % 3 ? 'Munich' : null,
    deviceClass: devices[i % 3]!,
    os: i % 2 ? 'ios' : 'windows',
    browser: 'Chrome',
    referrerHost: i % 4 ? 'news.example.com' : null,
    utmSource: i % 5 ? 'newsletter' : null,
    utmCampaign: 'spring',
    source: i % 7 ? 'link' : 'qr',
    destination: 'https://example.com/landing',
    bot: i % 50 === 0,
  });
}
