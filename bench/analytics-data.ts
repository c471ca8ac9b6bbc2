/**
 * The generated workspace the analytics and dashboard suites measure: 10k links in 50
 * campaigns (tagged, most with routing rules) in Postgres, and clicks and conversions
 * generated inside ClickHouse (`INSERT INTO events SELECT ... FROM numbers()`,
 * deterministic cityHash64 columns), so the materialized views fill every rollup
 * exactly as ingestion does.
 *
 * Realistic where a breakdown's cost depends on it: every dimension varies.
 *   - country, region and city come together from places drawn from the shipped geo-IP
 *     data (GeoIp over deterministic random IPv4 addresses: ~1,700 cities, ~530
 *     regions, ~120 countries, skewed as address space is, ~13 % unknown);
 *   - all five utm fields vary (6-500 values each, most clicks with some empty);
 *   - links carry 0-3 tags of 24; each link has 0-3 rules (link 0: 4 percentage
 *     rules, the 5-variant experiment), clicks are decided by one of them or by
 *     none, and the destination follows the rule (~30k destinations);
 *   - ~20 referrer hosts, 7 browsers, 5 systems, 3 device classes, link or QR.
 * Link popularity is skewed (u^3: link 0 is the busiest), a link's campaign is fixed
 * (link % 50), ~2 % bots, ~10 % impressions, visitors from a pool of 2M so they repeat.
 */
import { GeoIp } from '../shared/request-facts/geo-ip.ts';
import { mulberry32 } from '../shared/testing/seeded-random.ts';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Sql } from '../shared/db/postgres.ts';

export const LINKS = 10_000;
export const CAMPAIGNS = 50;
const PLACES = 5_000;

/** Ids in the formats the API's filters accept (`link_` + letters and digits, ...). */
export const benchLinkId = (i: number) => `link_b${i}`;
export const benchCampaignId = (i: number) => `campaign_b${i}`;
/** Rule k (1-based) of link i. */
export const benchRuleId = (link: number, k: number) => `rule_b${link}r${k}`;
/** Rules of link i: link 0 has 4 (its experiment has 5 variants with the default), the others 0-3. */
const RULES_SQL = (link: string) => `if(${link} = 0, 4, ${link} % 4)`;

/** Tags of the links; `BENCH_TAG` is one of them (on ~1 link in 6). */
const TAGS = ['summer', 'winter', 'spring', 'autumn', 'email', 'social', 'paid', 'organic', 'print', 'event', 'partner', 'retail',
  'b2b', 'b2c', 'launch', 'promo', 'evergreen', 'test', 'emea', 'americas', 'apac', 'video', 'blog', 'podcast'];
export const BENCH_TAG = 'email';

/**
 * Campaigns, links (with their tags) and rules in Postgres, with the ids the generated
 * clicks use, so link rows get short codes, rule rows names and types, tag filters links.
 */
export async function seedBenchWorkspace(sql: Sql, workspaceId: string): Promise<{ rules: number }> {
  const campaigns = Array.from({ length: CAMPAIGNS }, (_, i) => benchCampaignId(i));
  await sql`INSERT INTO campaigns (id, workspace_id, name) SELECT c, ${workspaceId}, c FROM unnest(${campaigns}::text[]) AS c`;
  // Tags: none for 1 link in 5, else one to three of TAGS.
  await sql`
    INSERT INTO links (id, workspace_id, campaign_id, domain_key, short_code, destination_url, tags)
    SELECT 'link_b' || i, ${workspaceId}, 'campaign_b' || (i % ${CAMPAIGNS}), '', 'bench' || i, 'https://example.com/l' || i,
      CASE WHEN i % 5 = 0 THEN '{}'::text[]
        ELSE ARRAY(SELECT DISTINCT (${TAGS}::text[])[1 + (i * 7 + k * 11) % ${TAGS.length}] FROM generate_series(0, i % 3) AS k) END
    FROM generate_series(0, ${LINKS - 1}) AS i`;
  // Link 0: four percentage rules (20 % each), the experiment; others: geo, device and percentage rules.
  const [row] = await sql<{ n: number }[]>`
    WITH r AS (
      SELECT i, k FROM generate_series(0, ${LINKS - 1}) AS i, generate_series(1, 4) AS k
      WHERE k <= CASE WHEN i = 0 THEN 4 ELSE i % 4 END
    ), ins AS (
      INSERT INTO rules (id, workspace_id, campaign_id, link_id, name, type, conditions, destination_url, priority)
      SELECT 'rule_b' || i || 'r' || k, ${workspaceId}, 'campaign_b' || (i % ${CAMPAIGNS}), 'link_b' || i,
        CASE WHEN i = 0 THEN 'variant ' || k ELSE 'rule ' || k END,
        CASE WHEN i = 0 OR k = 3 THEN 'percentage' WHEN k = 1 THEN 'geo' ELSE 'device' END,
        CASE WHEN i = 0 OR k = 3 THEN '{"percentage": 20}' WHEN k = 1 THEN '{"countries": ["US"]}' ELSE '{"devices": ["mobile"]}' END::jsonb,
        'https://example.com/l' || i || '/r' || k, 10 * k
      FROM r RETURNING 1
    ) SELECT count(*)::int AS n FROM ins`;
  return { rules: row!.n };
}

/**
 * Places (country, region, city; '' unknown) of deterministic random IPv4 addresses in
 * the shipped geo-IP data, so a generated click's three agree and follow the data's own
 * spread (~1,700 cities, ~530 regions, ~120 countries, ~13 % unknown). ~0.5 s (the
 * database is read once).
 */
export function benchPlaces(): Array<{ country: string; region: string; city: string }> {
  const geo = GeoIp.open();
  const random = mulberry32(16);
  return Array.from({ length: PLACES }, () => {
    const place = geo.lookup(Array.from({ length: 4 }, () => Math.floor(random() * 256)).join('.'));
    return { country: place.country ?? '', region: place.region ?? '', city: place.city ?? '' };
  });
}

/** benchPlaces() in ClickHouse as table bench_places (too many for a query parameter), which the generated rows draw from. */
export async function storeBenchPlaces(ch: ClickHouseClient): Promise<{ places: number; cities: number }> {
  const places = benchPlaces().map((p, i) => ({ i, ...p }));
  await ch.command({ query: 'CREATE TABLE IF NOT EXISTS bench_places (i UInt32, country String, region String, city String) ENGINE = Memory' });
  await ch.command({ query: 'TRUNCATE TABLE bench_places' });
  await ch.insert({ table: 'bench_places', values: places, format: 'JSONEachRow' });
  return { places: places.length, cities: new Set(places.map((p) => `${p.country}|${p.region}|${p.city}`)).size };
}

/** Parameters of one insert of generated rows (see generatedRows). */
export type GenerationParams = {
  ws: string;
  sliceStartMs: number;
  sliceSpanMs: number;
  campaigns: string[];
  offset: number;
  count: number;
  perMillion: number;
};

export function generationParams(p: Omit<GenerationParams, 'campaigns'>): GenerationParams {
  return { ...p, campaigns: Array.from({ length: CAMPAIGNS }, (_, i) => benchCampaignId(i)) };
}

/**
 * Rows number `offset .. offset+count-1`. Every 11th row (number % 11 = 10) belongs to
 * one of three other workspaces; the rest to the workspace under test, so a tier of
 * N events for it needs N * 11/10 rows. Times fall in the insert's slice of the 30
 * days. The rule deciding a click: k = 0 (none, the default destination) or one of
 * its link's rules.
 */
const generatedRows = `
    SELECT
      n,
      if(n % 11 = 10, concat('ws_bench_other_', toString(h1 % 3)), {ws:String}) AS workspace_id,
      concat('link_b', toString(link)) AS link_id,
      toUInt64({sliceStartMs:Int64} + toInt64(h2 % {sliceSpanMs:UInt64})) AS ms,
      fromUnixTimestamp64Milli(toInt64(ms), 'UTC') AS ts,
      -- In the redirector's format (shared/click-id.ts: version 1, the click's ms big-endian, 6 random
      -- bytes, 22 link characters, a 12-byte MAC, base64url): 66 characters, the time readable by ClickHouse.
      concat('ck_', trimRight(base64URLEncode(concat(char(1), unhex(leftPad(hex(ms), 12, '0')), substring(unhex(leftPad(hex(h1), 16, '0')), 1, 6),
        leftPad(toString(link), 22, '0'), unhex(leftPad(hex(h3), 16, '0')), substring(unhex(leftPad(hex(h4), 16, '0')), 1, 4))), '=')) AS click_id,
      if(h3 % 100 < 10, 'impression', 'click') AS kind,
      {campaigns:Array(String)}[1 + link % ${CAMPAIGNS}] AS campaign_id,
      concat('v', toString(h4 % 2000000)) AS visitor_id,
      p.country AS country,
      p.region AS region,
      p.city AS city,
      ['mobile','mobile','desktop','desktop','tablet'][1 + bitShiftRight(h3, 16) % 5] AS device_class,
      ['ios','android','windows','macos','linux'][1 + bitShiftRight(h3, 24) % 5] AS os,
      ['Chrome','Chrome','Safari','Firefox','Edge','Samsung Internet','Opera',''][1 + bitShiftRight(h3, 32) % 8] AS browser,
      if(bitShiftRight(h1, 8) % 3 = 0, '', ['news.example.com','t.co','google.com','facebook.com','www.linkedin.com','l.instagram.com','bing.com',
        'duckduckgo.com','reddit.com','news.ycombinator.com','mail.google.com','outlook.live.com','www.youtube.com','m.facebook.com','lm.facebook.com',
        'blog.example.org','partner.example.net','search.yahoo.com','yandex.ru','baidu.com'][1 + bitShiftRight(h1, 16) % 20]) AS referrer_host,
      ['', '', 'newsletter', 'google', 'facebook', 'twitter', 'linkedin', 'instagram', 'partner_a', 'partner_b'][1 + bitShiftRight(h1, 24) % 10] AS utm_source,
      ['', 'email', 'cpc', 'social', 'organic', 'referral', 'display'][1 + bitShiftRight(h1, 32) % 7] AS utm_medium,
      if(bitShiftRight(h1, 40) % 3 = 0, '', concat('campaign_', toString(bitShiftRight(h1, 44) % 40))) AS utm_campaign,
      if(bitShiftRight(h4, 24) % 4 != 0, '', concat('keyword ', toString(toUInt32(pow((bitShiftRight(h4, 28) % 1000) / 1000, 2) * 500)))) AS utm_term,
      ['', '', '', 'hero', 'footer', 'sidebar', 'banner_a', 'banner_b', 'cta', 'text_link', 'image', 'video'][1 + bitShiftRight(h4, 40) % 12] AS utm_content,
      if(bitShiftRight(h1, 52) % 7 = 0, 'qr', 'link') AS source,
      bitShiftRight(h5, 32) % (1 + ${RULES_SQL('link')}) AS k,
      if(k = 0, '', concat('rule_b', toString(link), 'r', toString(k))) AS rule_id,
      concat('https://example.com/l', toString(link), if(k = 0, '', concat('/r', toString(k)))) AS destination,
      bitShiftRight(h3, 40) % 50 = 0 AS bot
    FROM (
      SELECT number + {offset:UInt64} AS n, cityHash64(n) AS h1, cityHash64(n, 2) AS h2, cityHash64(n, 3) AS h3, cityHash64(n, 4) AS h4, cityHash64(n, 6) AS h5,
        toUInt32(floor(pow((cityHash64(n, 5) % 1000000) / 1000000, 3) * ${LINKS})) AS link, toUInt32(h5 % ${PLACES}) AS place
      FROM numbers({count:UInt64})
    ) AS g
    ANY LEFT JOIN bench_places AS p ON p.i = g.place`;

const EVENT_COLUMNS = `workspace_id, link_id, ts, click_id, kind, campaign_id, visitor_id, country, region, city, device_class, os,
      browser, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content, source, rule_id, destination, bot`;

export function generateStatement(): string {
  return `INSERT INTO events (${EVENT_COLUMNS}) SELECT ${EVENT_COLUMNS} FROM (${generatedRows})`;
}

/**
 * Conversions of the same rows: `perMillion` of the non-bot clicks of every workspace,
 * minutes after their click, 95 % attributed; 3 in 4 carry an order id and 1 in 10 of
 * those is stored twice, 5 s apart (a repeated pixel: counted once).
 */
export function generateConversionsStatement(): string {
  return `
    INSERT INTO conversions (workspace_id, link_id, ts, conversion_id, click_id, campaign_id, event, value, currency, order_id, attributed, source)
    SELECT workspace_id, link_id, ts + toIntervalSecond(60 + c % 3000 + 5 * (copy - 1)), concat('conv_bench_', toString(n), '_', toString(copy)),
      click_id, campaign_id, ['purchase', 'signup', 'lead', 'purchase'][1 + c % 4], toDecimal64((c % 10000) / 100, 4), 'USD',
      if(c % 4 = 0, '', concat('order_', toString(n))), c % 20 != 0, if(copy = 2 OR c % 3 = 0, 'pixel', 's2s')
    FROM (SELECT *, cityHash64(n, 9) AS c FROM (${generatedRows}) WHERE kind = 'click' AND NOT bot AND cityHash64(n, 8) % 1000000 < {perMillion:UInt64})
    ARRAY JOIN if(c % 4 != 0 AND c % 40 < 4, [1, 2], [1]) AS copy`;
}
