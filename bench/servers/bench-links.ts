/**
 * The links of the redirect benchmark, generated deterministically so the server
 * (which loads them) and the suite (which writes the load generator's script) agree
 * on the short codes without exchanging them.
 *
 * Mix per 100 links: 60 plain, 10 with conversion tracking (clickId appended),
 * 20 with 4 rules (geo, device, time, percentage), 10 with 10 mixed rules.
 */
import { makeLink, makeRule } from '../../shared/routing/fixtures.ts';
import { compileLink, type CompiledLink, type RuleRecord } from '../../shared/routing/index.ts';

export const BENCH_LINK_COUNT = 100_000;

export function benchShortCode(i: number): string {
  return `b${i.toString(36).padStart(4, '0')}`;
}

/** `link_` + 22 base62 characters, as newId('link') makes, but deterministic. */
function benchLinkId(i: number): string {
  return `link_BENCH${String(i).padStart(17, '0')}`;
}

function rules(linkId: string, count: number): RuleRecord[] {
  const kinds: Array<() => RuleRecord> = [
    () => makeRule('geo', { countries: ['FR', 'DE', 'ES', 'IT', 'NL'], operator: 'in' }),
    () => makeRule('device', { devices: ['mobile', 'tablet'] }),
    () => makeRule('time', { timezone: 'Europe/Berlin', days: ['saturday', 'sunday'], startTime: '10:00', endTime: '18:00' }),
    () => makeRule('percentage', { percentage: 5 }),
    () => makeRule('geo', { countries: ['JP', 'KR'], operator: 'in' }),
    () => makeRule('device', { devices: ['desktop'], os: ['linux'] }),
  ];
  return Array.from({ length: count }, (_, k) => ({ ...kinds[k % kinds.length]!(), linkId, priority: 100 - k }));
}

export function benchLink(i: number): CompiledLink {
  const id = benchLinkId(i);
  const slot = i % 100;
  const link = makeLink({
    id,
    shortCode: benchShortCode(i),
    destinationUrl: `https://example.com/landing/${i}`,
    defaultDestination: `https://example.com/landing/${i}?ref=bench`,
    conversionTracking: slot >= 60 && slot < 70,
  });
  const ruleCount = slot >= 90 ? 10 : slot >= 70 ? 4 : 0;
  return compileLink(link, rules(id, ruleCount), []);
}
