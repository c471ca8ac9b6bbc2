/**
 * Generated bad requests over every route the redirector serves (testing/bad-input-cases.ts),
 * against the real uWS app with links in every state. Every answer is checked: never a
 * 5xx, and every 4xx is one of the redirector's own pages with the status it names.
 * Requests uWS cannot parse may go unanswered (README "Malformed requests"); all others
 * must be answered. The seed is printed; BAD_INPUT_SEED=<seed> repeats a run,
 * BAD_INPUT_CASES=<n> changes its size.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../shared/auth/password-hash.ts';
import { createClickId } from '../../shared/click-id.ts';
import { newId } from '../../shared/ids.ts';
import type { Logger } from '../../shared/logger.ts';
import { GeoIp } from '../../shared/request-facts/geo-ip.ts';
import { makeLink, makeRule } from '../../shared/routing/fixtures.ts';
import { compileLink, type CompiledLink, type LinkRecord, type RuleRecord } from '../../shared/routing/index.ts';
import { badInputSeed, inPool } from '../../shared/testing/hostile-values.ts';
import { rawExchange, type RawResponse } from '../../shared/testing/raw-http.ts';
import { mulberry32 } from '../../shared/testing/seeded-random.ts';
import { createRedirectorApp, type RedirectorApp } from './app.ts';
import { loadRedirectorConfig } from './config.ts';
import * as pages from './pages/html-pages.ts';
import { SnapshotStore } from './snapshot/snapshot-store.ts';
import { generateRedirectorCases, type RedirectorCase, type RedirectorFixtures } from './testing/bad-input-cases.ts';

const SEED = badInputSeed(process.env.BAD_INPUT_SEED);
const CASES = process.env.BAD_INPUT_CASES ? Number(process.env.BAD_INPUT_CASES) : 3_000;
const PASSWORD = 'open sesame';
/** Long enough to tell "no answer" from a slow one on a busy machine; far below uWS's idle timeout. */
const NO_ANSWER_MS = 2_000;

/** The body of each 4xx page, by status line: a 4xx must be one of them. */
const pagesByStatus = new Map<number, Set<string>>();
for (const page of Object.values(pages)) {
  if (typeof page !== 'object' || page === null || !('status' in page)) continue;
  const status = Number(page.status.slice(0, 3));
  if (status >= 400) pagesByStatus.set(status, (pagesByStatus.get(status) ?? new Set()).add(page.body.toString('utf8')));
}
// A wrong password's form (403) is built by passwordPage, with the visitor's referrer host
// in a hidden field when the post carried one: without that field, the prebuilt page.
pagesByStatus.set(403, (pagesByStatus.get(403) ?? new Set()).add(pages.passwordPage(true, null).body.toString('utf8')));
const carriedReferrer = new RegExp(`\\n<input type="hidden" name="${pages.REFERRER_FIELD}" value="[^"<>]*">`);

function problemOf(c: RedirectorCase, answer: RawResponse | 'closed' | 'timeout'): string | null {
  if (typeof answer === 'string') return c.mayGoUnanswered ? null : `no answer (${answer})`;
  if (answer.status >= 500) return `${answer.status} ${answer.body.slice(0, 200)}`;
  if (answer.status >= 400) {
    if (!/^text\/html/.test(answer.headers['content-type'] ?? '')) return `${answer.status} without an HTML page (${answer.headers['content-type'] ?? 'no content type'})`;
    if (!c.head && !pagesByStatus.get(answer.status)?.has(answer.body.replace(carriedReferrer, ''))) return `${answer.status} that is none of the redirector's pages: ${answer.body.slice(0, 200)}`;
  }
  return null;
}

describe('generated bad input on the redirector', () => {
  const store = new SnapshotStore();
  const errors: string[] = [];
  const logger: Logger = { debug() {}, info() {}, warn() {}, error: (msg, fields) => void errors.push(`${msg} ${JSON.stringify(fields).slice(0, 400)}`) };
  let app: RedirectorApp;
  let port: number;
  let fixtures: RedirectorFixtures;
  let version = 0;
  const secret = randomBytes(32);

  function add(overrides: Partial<LinkRecord>, rules: RuleRecord[] = [], extra: Partial<CompiledLink> & { passwordHash?: string } = {}): string {
    const id = newId('link');
    const compiled = { ...compileLink(makeLink({ id, ...overrides }), rules.map((rule) => ({ ...rule, linkId: id })), []), ...extra };
    store.apply({ version: ++version, linkId: id, link: compiled });
    return id;
  }

  beforeAll(async () => {
    store.setReady(true);
    const tracked = add({ shortCode: 'tracked', conversionTracking: true, trackingType: 'pixel' });
    const s2s = add({ shortCode: 'tracked-s2s', conversionTracking: true, trackingType: 's2s' });
    add({ shortCode: 'plain' });
    add({ shortCode: 'never', redirectBehavior: 'never' });
    add({ shortCode: 'disabled', enabled: false });
    add({ shortCode: 'expired', expiresAt: '2020-01-01T00:00:00Z' });
    add({ shortCode: 'expired-url', expiresAt: '2020-01-01T00:00:00Z', expiredUrl: 'https://example.com/sorry' });
    add({ shortCode: 'limited', clicksLimit: 1 });
    add({ shortCode: 'rule-only', redirectBehavior: 'rule_only' }, [makeRule('geo', { countries: ['FR'], operator: 'in' }, { destinationUrl: 'https://example.fr/' })]);
    add({ shortCode: 'split' }, [makeRule('percentage', { percentage: 50 }, { destinationUrl: 'https://example.com/a' }), makeRule('device', { devices: ['mobile'], os: ['ios'] }, { destinationUrl: 'https://example.com/i' })]);
    add({ shortCode: 'deep', deepLinkEnabled: true, deepLinkIos: 'myapp://item/42', deepLinkAndroid: 'myapp://item/42', deepLinkFallbackUrl: 'https://example.com/app' });
    add({ shortCode: 'query', defaultDestination: 'https://example.com/p?ref=x#top', forwardQuery: 'override_utm', conversionTracking: true });
    add({ shortCode: 'locked', hasPassword: true }, [], { passwordHash: await hashPassword(PASSWORD) });
    add({ shortCode: 'shared', domain: 'go.brand.example', defaultDestination: 'https://brand.example/' });
    fixtures = {
      codes: ['tracked', 'tracked-s2s', 'plain', 'never', 'disabled', 'expired', 'expired-url', 'limited', 'rule-only', 'split', 'deep', 'query', 'locked', 'shared', 'unknown'],
      customDomain: { host: 'go.brand.example', code: 'shared' },
      password: PASSWORD,
      clickIds: [createClickId(secret, tracked, Date.now()), createClickId(secret, s2s, Date.now())],
    };
    app = createRedirectorApp({
      lookup: store,
      sink: { emit() {} },
      secret,
      config: loadRedirectorConfig({ TRUSTED_IP_HEADER: 'x-forwarded-for', TRUSTED_COUNTRY_HEADER: 'CF-IPCountry', PASSWORD_ATTEMPTS_PER_MINUTE: '2' }),
      logger,
      geo: GeoIp.open(),
      onPixelConversion: () => {},
    });
    ({ port } = await app.listen(0, '127.0.0.1'));
  });
  afterAll(() => app?.close());

  it('every route, broken thousands of ways: never a 5xx, every 4xx one of its own pages', async () => {
    expect(app.routes.map((r) => `${r.method} ${r.pattern}`)).toEqual(expect.arrayContaining(['get /:code', 'head /:code', 'post /:code', 'get /i/:code', 'get /p.gif', 'any /*']));
    const cases = generateRedirectorCases(mulberry32(SEED), app.routes, fixtures, CASES);
    // What uWS may leave unanswered waits NO_ANSWER_MS: those all at once, the rest in small batches.
    const answered = cases.filter((c) => !c.mayGoUnanswered);
    const refused = cases.filter((c) => c.mayGoUnanswered);
    const answers = new Map<RedirectorCase, RawResponse | 'closed' | 'timeout'>();
    await inPool(answered, 8, async (c) => void answers.set(c, await rawExchange(port, c.bytes, 20_000)));
    await inPool(refused, 64, async (c) => void answers.set(c, await rawExchange(port, c.bytes, NO_ANSWER_MS)));

    const failures: string[] = [];
    const statuses: Record<string, number> = {};
    for (const c of cases) {
      const answer = answers.get(c)!;
      const status = typeof answer === 'string' ? answer : String(answer.status);
      statuses[status] = (statuses[status] ?? 0) + 1;
      const problem = problemOf(c, answer);
      if (problem !== null) failures.push(`${problem}\n    for ${c.label}`);
    }
    const fiveHundreds = [...answers.values()].filter((a) => typeof a === 'object' && a.status >= 500).length;
    console.log(
      `generated bad input on the redirector: ${cases.length} cases over ${app.routes.length} routes (${refused.length} that uWS may leave unanswered), seed ${SEED} ` +
        `(BAD_INPUT_SEED=${SEED} repeats them); ${fiveHundreds} 5xx, ${failures.length} failures; answers by status ${JSON.stringify(statuses)}`,
    );
    expect(failures.slice(0, 25), `seed ${SEED}; errors logged: ${errors.slice(0, 10).join('\n')}`).toEqual([]);
    expect(errors, `seed ${SEED}`).toEqual([]);
  }, 300_000);
});
