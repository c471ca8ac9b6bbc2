/**
 * Generated bad requests for every operation of the API, read from its OpenAPI
 * document (so a new endpoint is covered without touching this file). Each case is
 * a request written byte for byte: most start from the operation's example body,
 * path and query, and break one to three things about it; others break the HTTP
 * around it (headers, methods, framing, bytes in the request line). Generation
 * draws only from `rand`, so a seed gives the same cases again.
 */
import {
  copy,
  edgeDates,
  edgeTimestamps,
  hostileEncodings,
  hostileNumbers,
  hostileNumberTexts,
  hostileStrings,
  int,
  invalidNumberTokens,
  invalidUtf8,
  jsonBytes,
  nested,
  percentEncode,
  pick,
  put,
  RawBytes,
  RawJson,
  type Rand,
} from '../../../shared/testing/hostile-values.ts';
import { wireRequest } from '../../../shared/testing/raw-http.ts';

type JsonSchema = Record<string, any>;

export interface FuzzOperation {
  method: string;
  /** OpenAPI style: `/links/{id}`. */
  path: string;
  query: Array<{ name: string; required: boolean; schema: JsonSchema }>;
  body?: JsonSchema;
  example?: unknown;
  /** A key is needed. */
  secured: boolean;
}

/** Every operation of an OpenAPI document. */
export function operationsOf(document: { paths: Record<string, Record<string, any>> }): FuzzOperation[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => ({
      method: method.toUpperCase(),
      path,
      query: (op.parameters ?? []).filter((p: { in: string }) => p.in === 'query').map((p: { name: string; required?: boolean; schema: JsonSchema }) => ({ name: p.name, required: p.required === true, schema: p.schema })),
      body: op.requestBody?.content?.['application/json']?.schema,
      example: op.requestBody?.content?.['application/json']?.example,
      secured: (op.security ?? [{}]).length > 0,
    })),
  );
}

/** What the cases may name: the test's workspace and its things, and another workspace's. */
export interface Fixtures {
  host: string;
  key: string;
  /** A key of the same workspace without any scope. */
  scopelessKey: string;
  linkId: string;
  campaignId: string;
  ruleId: string;
  webhookId: string;
  domainId: string;
  qrId: string;
  clickId: string;
  /** Links that DELETE cases may take (so the fixtures above live on). */
  spareLinks: string[];
  /** Things of another workspace: always a 404. */
  foreign: { linkId: string; campaignId: string };
  /** Extra starting bodies beyond the document's examples, by `METHOD /path`. */
  extraExamples: Record<string, unknown[]>;
}

export interface ApiCase {
  label: string;
  bytes: Buffer;
  method: string;
  /** The request sends no body back (HEAD). */
  head: boolean;
}

/** Ids a path segment or id field may hold: valid ones of each kind, others' ids, and junk. */
function hostileIds(fx: Fixtures): string[] {
  return [
    fx.linkId, fx.campaignId, fx.ruleId, fx.webhookId, fx.domainId, fx.foreign.linkId, fx.foreign.campaignId, 'link_', 'link_x', 'x', '-1', '0', '__proto__', 'constructor',
    '%00', 'a%00b', '%E0%A4%A', '%ff', 'x'.repeat(3000), '..%2F..%2Fetc', '%F0%9F%92%A5', 'link_%27%20OR%201=1', '%25', '.', '..', '%2e%2e', 'link_' + 'A'.repeat(200),
    encodeURIComponent('link_\u202e'), 'LINK_' + fx.linkId.slice(5), `${fx.linkId}%20`, `${fx.linkId}.png`,
  ];
}

/** The fixture a path parameter names, for `method` (DELETE takes spares, so the fixtures live on). */
function fixtureFor(path: string, param: string, method: string, fx: Fixtures, rand: Rand): string {
  if (param === 'file') return `${fx.qrId}.${pick(rand, ['png', 'svg'])}`;
  const area = path.split('/')[1];
  if (method === 'DELETE') {
    if (area === 'links') return pick(rand, fx.spareLinks);
    // Deleting the others would leave later cases a 404 only: their DELETE gets a foreign id.
    return fx.foreign.linkId;
  }
  const byArea: Record<string, string> = { links: fx.linkId, campaigns: fx.campaignId, rules: fx.ruleId, webhooks: fx.webhookId, domains: fx.domainId, qr: fx.linkId, analytics: fx.linkId };
  return byArea[area ?? ''] ?? 'x';
}

/** The example with placeholder ids made real (so the request gets past lookups). */
function realIds(value: unknown, method: string, fx: Fixtures, rand: Rand): unknown {
  if (typeof value === 'string') {
    if (value === 'link_x') return method === 'DELETE' ? pick(rand, fx.spareLinks) : fx.linkId;
    if (value === 'link_y') return pick(rand, fx.spareLinks);
    if (value === 'campaign_x') return fx.campaignId;
    if (value === 'ck_...') return fx.clickId;
    return value;
  }
  if (Array.isArray(value)) return value.map((v) => realIds(v, method, fx, rand));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) put(out, key, realIds((value as Record<string, unknown>)[key], method, fx, rand));
    return out;
  }
  return value;
}

/** The schema of one property, whatever wraps it (anyOf with null, oneOf branches). */
function propertySchema(schema: JsonSchema | undefined, key: string): JsonSchema | undefined {
  if (!schema) return undefined;
  if (schema.properties?.[key]) return schema.properties[key];
  for (const branch of [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])]) {
    const found = propertySchema(branch, key);
    if (found) return found;
  }
  return undefined;
}

function schemaTypes(schema: JsonSchema | undefined): string[] {
  if (!schema) return [];
  return [schema.type, ...(schema.anyOf ?? []).map((s: JsonSchema) => s.type), ...(schema.oneOf ?? []).map((s: JsonSchema) => s.type)].filter((t): t is string => typeof t === 'string');
}

function enumValues(schema: JsonSchema | undefined): unknown[] {
  if (!schema) return [];
  const own = [...(schema.enum ?? []), ...('const' in schema ? [schema.const] : [])];
  const items = schema.items ? enumValues(schema.items) : [];
  return [...own, ...items, ...[...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].flatMap(enumValues)];
}

/** A value that is wrong for `schema` (or, now and then, right but unusual). */
function hostileValue(rand: Rand, schema: JsonSchema | undefined, fx: Fixtures, now: number): unknown {
  const types = schemaTypes(schema);
  const r = rand();
  if (r < 0.15) return genericHostile(rand, fx, now);
  if (types.includes('string') || r < 0.25) {
    const format = schema?.format ?? schema?.anyOf?.find((s: JsonSchema) => s.format)?.format;
    if (format === 'date-time' && rand() < 0.7) return pick(rand, edgeTimestamps(now));
    const options = enumValues(schema);
    if (options.length > 0 && rand() < 0.4) {
      const value = String(pick(rand, options));
      return pick(rand, [value, value.toUpperCase(), ` ${value}`, `${value}\u0000`, `${value},${value}`]);
    }
    if (rand() < 0.15) return new RawBytes(Buffer.concat([Buffer.from('a'), Buffer.from(pick(rand, invalidUtf8)), Buffer.from('b')]));
    if (rand() < 0.1) return pick(rand, hostileIds(fx));
    return pick(rand, hostileStrings);
  }
  if (types.includes('integer') || types.includes('number')) {
    const bounds = [schema?.minimum, schema?.maximum, ...(schema?.anyOf ?? []).flatMap((s: JsonSchema) => [s.minimum, s.maximum])].filter((n): n is number => typeof n === 'number');
    if (bounds.length > 0 && rand() < 0.3) {
      const bound = pick(rand, bounds);
      return pick(rand, [bound - 1, bound + 1, bound, bound + 0.5]);
    }
    return rand() < 0.9 ? pick(rand, hostileNumbers) : pick(rand, invalidNumberTokens);
  }
  if (types.includes('boolean')) return pick(rand, ['true', 'false', 0, 1, null, [], new RawJson('True')]);
  if (types.includes('array')) {
    const item = schema?.items ?? schema?.anyOf?.find((s: JsonSchema) => s.items)?.items;
    return pick(rand, [
      () => [],
      () => [hostileValue(rand, item, fx, now)],
      () => Array.from({ length: 1 + int(rand, 4) }, () => hostileValue(rand, item, fx, now)),
      () => Array.from({ length: 1001 }, () => pick(rand, ['a', 'US', 1])),
      () => nested(2 + int(rand, 6), false),
    ])();
  }
  if (types.includes('object')) return pick(rand, [{}, { x: 1 }, nested(3 + int(rand, 40), true), null, []]);
  return genericHostile(rand, fx, now);
}

/** Any kind of value, nested now and then. */
function genericHostile(rand: Rand, fx: Fixtures, now: number): unknown {
  const r = rand();
  if (r < 0.35) return pick(rand, hostileStrings);
  if (r < 0.5) return pick(rand, hostileNumbers);
  if (r < 0.55) return pick(rand, edgeTimestamps(now));
  if (r < 0.6) return pick(rand, hostileIds(fx));
  if (r < 0.68) return rand() < 0.5;
  if (r < 0.74) return null;
  if (r < 0.84) return Array.from({ length: int(rand, 4) }, () => pick(rand, hostileStrings));
  if (r < 0.92) return nested(1 + int(rand, 40), rand() < 0.5, pick(rand, hostileStrings));
  return { [pick(rand, ['x', 'a', 'constructor'])]: pick(rand, hostileStrings) };
}

/** Paths to the values inside a body (object keys and array indexes), the body itself excluded. */
function innerPaths(value: unknown, prefix: Array<string | number> = [], out: Array<Array<string | number>> = []): Array<Array<string | number>> {
  if (Array.isArray(value)) value.forEach((v, i) => (out.push([...prefix, i]), innerPaths(v, [...prefix, i], out)));
  else if (value !== null && typeof value === 'object' && !(value instanceof RawJson) && !(value instanceof RawBytes)) {
    for (const key of Object.keys(value)) out.push([...prefix, key]), innerPaths((value as Record<string, unknown>)[key], [...prefix, key], out);
  }
  return out;
}

function schemaAt(schema: JsonSchema | undefined, path: Array<string | number>): JsonSchema | undefined {
  let at = schema;
  for (const step of path) {
    if (!at) return undefined;
    at = typeof step === 'number' ? (at.items ?? at.anyOf?.find((s: JsonSchema) => s.items)?.items) : propertySchema(at, step);
  }
  return at;
}

/** The example broken in one to three places. */
function brokenBody(rand: Rand, op: FuzzOperation, fx: Fixtures, now: number): unknown {
  const examples = [op.example ?? {}, ...(fx.extraExamples[`${op.method} ${op.path}`] ?? [])];
  const body = copy(realIds(pick(rand, examples), op.method, fx, rand)) as Record<string, unknown>;
  if (rand() < 0.05) return pick(rand, [[], 'text', 42, null, true, nested(33, false), nested(40, true), [body]]);
  const mutations = 1 + int(rand, 3);
  const fields = Object.keys(op.body?.properties ?? op.body?.oneOf?.[0]?.properties ?? body);
  for (let m = 0; m < mutations; m++) {
    const r = rand();
    const inner = innerPaths(body);
    if (r < 0.45 || inner.length === 0) {
      // A field of the schema, present in the example or not.
      const field = fields.length > 0 && rand() < 0.85 ? pick(rand, fields) : pick(rand, ['x', '__proto__', 'constructor', 'id', 'workspaceId', 'createdAt', '']);
      put(body, field, hostileValue(rand, propertySchema(op.body, field), fx, now));
    } else if (r < 0.75) {
      // Somewhere inside (rule conditions, bulk items, patches).
      const path = pick(rand, inner);
      let parent: any = body;
      for (const step of path.slice(0, -1)) parent = parent[step];
      const last = path[path.length - 1]!;
      const value = hostileValue(rand, schemaAt(op.body, path), fx, now);
      if (typeof last === 'number') parent[last] = value;
      else put(parent, last, value);
    } else if (r < 0.85) {
      const key = pick(rand, Object.keys(body).length > 0 ? Object.keys(body) : ['x']);
      delete body[key];
    } else {
      // Valid values of the schema in unusual combinations (e.g. another rule type's conditions).
      const field = fields.length > 0 ? pick(rand, fields) : 'x';
      const options = enumValues(propertySchema(op.body, field));
      put(body, field, options.length > 0 ? pick(rand, options) : null);
    }
  }
  return body;
}

/** Parameters that steer what a query reads: broken more often than the many filters. */
const STEERING = /^(from|to|page|limit|granularity|timezone|format|compare|control|dimension|includeBots|event|status|enabled|type|q|include|domain|domainId|tag|linkId|campaignId)$/;

/** Date ranges at the ends of what the stores hold and beyond, as a client would send them. */
const DATE_RANGES: Array<[string, string]> = [
  ['9999-12-01', '9999-12-31'], ['0000-01-01', '0000-01-31'], ['2299-12-01', '2299-12-31'], ['2300-01-01', '2300-01-02'], ['1970-01-01', '1970-01-01'], ['1969-12-31', '1970-01-01'],
  ['1900-01-01', '1900-01-31'], ['2026-01-01', '2027-01-02'], ['2026-03-01', '2026-02-01'], ['0001-01-01', '0001-01-01'],
];

function queryValue(rand: Rand, name: string, schema: JsonSchema, fx: Fixtures): string {
  const options = enumValues(schema);
  const r = rand();
  if (/^(from|to)$/.test(name) || schema.pattern?.includes('\\d{4}-')) return r < 0.8 ? pick(rand, edgeDates) : new Date().toISOString().slice(0, 10);
  if (/^(page|limit)$/.test(name) || schema.pattern?.startsWith('^\\d')) return pick(rand, hostileNumberTexts);
  if (options.length > 0 && r < 0.6) return String(pick(rand, options)) + pick(rand, ['', '', ',x', 'X', ' ']);
  if (/(^|[a-z])(link|campaign)(Id)?$/i.test(name) && r < 0.7) return pick(rand, hostileIds(fx));
  if (name === 'timezone' && r < 0.7) return pick(rand, ['Pacific/Kiritimati', 'Pacific/Pago_Pago', 'Etc/GMT+12', 'Etc/GMT-14', 'Asia/Kathmandu', 'UTC', 'utc', 'Europe/Berlin', 'America/St_Johns']);
  return pick(rand, hostileStrings);
}

/**
 * A query string for `op`: required parameters given, then one to three others (most
 * often those that steer the query) with wrong, edge or odd values, or a date range
 * at the stores' ends; now and then unknown, repeated or undecodable keys.
 */
function brokenQuery(rand: Rand, op: FuzzOperation, fx: Fixtures): string {
  const params: Array<[string, string]> = op.query.filter((p) => p.required).map((p) => [p.name, String(enumValues(p.schema).length > 0 ? pick(rand, enumValues(p.schema)) : 'x')]);
  const steering = op.query.filter((p) => STEERING.test(p.name));
  if (op.query.some((p) => p.name === 'from') && rand() < 0.3) {
    const [from, to] = rand() < 0.7 ? pick(rand, DATE_RANGES) : [pick(rand, edgeDates), pick(rand, edgeDates)];
    const which = rand();
    if (which < 0.7) params.push(['from', from], ['to', to]);
    else params.push(which < 0.85 ? ['from', from] : ['to', to]);
    if (rand() < 0.3 && op.query.some((p) => p.name === 'timezone')) params.push(['timezone', pick(rand, ['Pacific/Kiritimati', 'Pacific/Pago_Pago'])]);
    if (rand() < 0.2 && op.query.some((p) => p.name === 'compare')) params.push(['compare', 'previous']);
    if (rand() < 0.2 && op.query.some((p) => p.name === 'granularity')) params.push(['granularity', pick(rand, ['hour', 'week', 'month'])]);
  } else {
    const n = 1 + int(rand, 3);
    for (let i = 0; i < n; i++) {
      const param =
        steering.length > 0 && rand() < 0.5 ? pick(rand, steering)
        : op.query.length > 0 && rand() < 0.85 ? pick(rand, op.query)
        : { name: pick(rand, ['x', 'sort', 'page[]', 'limit%00', '%zz', '', 'format', 'include', '__proto__', 'constructor']), schema: {} };
      params.push([param.name, queryValue(rand, param.name, param.schema, fx)]);
      if (rand() < 0.1) params.push([param.name, pick(rand, hostileStrings)]); // repeated key
    }
  }
  // A CSV export beside the broken ones, now and then.
  if (rand() < 0.2 && op.query.some((p) => p.name === 'format')) params.push(['format', 'csv']);
  const parts = params.map(([name, value]) => (rand() < 0.03 ? name : `${name}=${rand() < 0.1 ? pick(rand, hostileEncodings) : percentEncode(value)}`));
  return parts.join(rand() < 0.05 ? '&&' : '&');
}

function pathOf(rand: Rand, op: FuzzOperation, fx: Fixtures, hostile: boolean): string {
  return op.path.replace(/\{(\w+)\}/g, (_, param: string) => (hostile ? pick(rand, hostileIds(fx)) : fixtureFor(op.path, param, op.method, fx, rand)));
}

const CONTENT_TYPES = [
  'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', 'application/json; charset=utf-16', 'APPLICATION/JSON',
  'application/merge-patch+json', 'application/vnd.api+json', '*/*', '', 'application/json, text/plain', 'application/json; charset=', 'application/json;;;', 'json', 'application/xml',
];

const MALFORMED_JSON = [
  '{', '}', '{"a":}', '{"a":1,}', "{'a':1}", '[1,2', 'nul', '{"a":NaN}', '{"a":Infinity}', '"\\u12"', '{"a":"\\x00"}', '\ufeff{}', '{}}', '{"a":1}{"b":2}', '[]', '[{}]',
  '"text"', '42', 'true', 'null', '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{}}}', '['.repeat(20000) + ']'.repeat(20000), ' ', '\n\n', '{"a":"\\ud800"}',
  '{"a":1e400}', '{"a":-0}', '{"a":"' + '\\"'.repeat(1000) + '"}', '{"a":[' + '1,'.repeat(5000) + '1]}', '\u0000', '{"a"\u0000:1}', '{"a":1}\u0000',
];

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'TRACE', 'PROPFIND', 'MKCOL', 'SEARCH', 'LOCK', 'PURGE', 'FOO', 'get', 'Post', 'CONNECT'];

/** Generates `count` cases over `operations`. */
export function generateApiCases(rand: Rand, operations: FuzzOperation[], fx: Fixtures, count: number, now: number): ApiCase[] {
  const cases: ApiCase[] = [];
  for (let i = 0; i < count; i++) cases.push(generateCase(rand, operations, fx, now, i));
  return cases;
}

function generateCase(rand: Rand, operations: FuzzOperation[], fx: Fixtures, now: number, index: number): ApiCase {
  const op = pick(rand, operations);
  let method = op.method;
  let target = pathOf(rand, op, fx, false);
  let body: Buffer | undefined;
  let contentType: string | undefined;
  const headers: Array<[string, string | Uint8Array]> = [['host', fx.host]];
  let auth: string | null = op.secured || rand() < 0.1 ? `Bearer ${fx.key}` : null;
  let kind: string;
  let extraHeaders: Array<[string, string | Uint8Array]> = [];
  let framing: 'length' | 'chunked' | 'none' = 'length';
  let declaredLength: string | undefined;
  let version = 'HTTP/1.1';

  const r = rand();
  if (op.body && r < 0.3) {
    kind = 'body';
    body = jsonBytes(brokenBody(rand, op, fx, now));
    contentType = 'application/json';
  } else if (op.body && r < 0.42) {
    kind = 'raw body';
    const base = realIds(op.example ?? {}, op.method, fx, rand) as Record<string, unknown>;
    const s = rand();
    contentType = 'application/json';
    if (s < 0.25) body = Buffer.from(pick(rand, MALFORMED_JSON));
    else if (s < 0.45) {
      // Duplicate keys: a broken value before or after the good one (JSON.parse keeps the last).
      const key = pick(rand, Object.keys(base).length > 0 ? Object.keys(base) : ['x']);
      const good = jsonBytes(base);
      const dup = Buffer.concat([Buffer.from(`${JSON.stringify(key)}:`), jsonBytes(hostileValue(rand, propertySchema(op.body, key), fx, now))]);
      const inner = good.subarray(1, good.length - 1);
      body = rand() < 0.5 ? Buffer.concat([Buffer.from('{'), dup, inner.length ? Buffer.from(',') : Buffer.alloc(0), inner, Buffer.from('}')]) : Buffer.concat([good.subarray(0, good.length - 1), inner.length ? Buffer.from(',') : Buffer.alloc(0), dup, Buffer.from('}')]);
    } else if (s < 0.6) {
      // Invalid UTF-8 inside a string of the body.
      const withBytes = copy(base);
      const paths = innerPaths(withBytes).filter((p) => p.every((step) => typeof step === 'string'));
      put(withBytes, paths.length > 0 ? String(pick(rand, paths)[0]) : 'x', new RawBytes(Buffer.concat([Buffer.from('x'), Buffer.from(pick(rand, invalidUtf8))])));
      body = jsonBytes(withBytes);
    } else if (s < 0.75) {
      body = jsonBytes(base);
      contentType = pick(rand, CONTENT_TYPES);
      if (contentType === '') contentType = undefined;
    } else if (s < 0.85) {
      body = Buffer.alloc(0);
      framing = pick(rand, ['length', 'none', 'chunked'] as const);
    } else if (s < 0.92) {
      body = Buffer.concat([Buffer.from('{"title":"'), Buffer.alloc(70_000, 0x61), Buffer.from('"}')]);
    } else {
      // A Content-Length far beyond the limit: refused before a byte of body is read.
      body = Buffer.alloc(0);
      declaredLength = pick(rand, ['99999999999', '1073741824', '18446744073709551616']);
    }
    if (rand() < 0.1) framing = 'chunked';
  } else if (op.query.length > 0 && r < 0.65) {
    kind = 'query';
    target += `?${brokenQuery(rand, op, fx)}`;
    if (op.body) body = jsonBytes(realIds(op.example ?? {}, op.method, fx, rand)), (contentType = 'application/json');
  } else if (r < 0.72 && op.path.includes('{')) {
    kind = 'path';
    target = pathOf(rand, op, fx, true);
    if (op.body) body = jsonBytes(brokenBody(rand, op, fx, now)), (contentType = 'application/json');
  } else if (r < 0.84) {
    kind = 'headers';
    if (op.body) body = jsonBytes(realIds(op.example ?? {}, op.method, fx, rand)), (contentType = 'application/json');
    const h = rand();
    if (h < 0.15) extraHeaders.push(['x-big', 'a'.repeat(pick(rand, [17_000, 70_000]))]);
    else if (h < 0.2) extraHeaders = Array.from({ length: 2000 }, (_, n) => [`x-h${n}`, 'v'.repeat(10)] as [string, string]);
    else if (h < 0.3) headers[0] = ['host', pick(rand, ['', 'a'.repeat(300), '[::1', 'x:99999', 'evil.example', '127.0.0.1:1', '\u00ff\u00fe', '..', 'localhost:0', ' '])];
    else if (h < 0.35) headers.shift(); // no Host at all
    else if (h < 0.4) headers.push(['host', 'second.example']);
    else if (h < 0.6) auth = pick(rand, [null, 'Bearer', 'Bearer ', `bearer ${fx.key}`, `Bearer ${fx.key}x`, `Bearer ${fx.key.slice(0, -1)}`, `Basic ${Buffer.from('a:b').toString('base64')}`, `Bearer ${'a'.repeat(8000)}`, `Bearer ${fx.scopelessKey}`, 'Bearer lr_live_\u00ff', `Bearer  ${fx.key}`, `Bearer ${fx.key} ${fx.key}`]);
    else if (h < 0.7) extraHeaders.push(['accept', pick(rand, ['text/csv', 'text/csv;q=0', '*/*;q=x', 'image/png', 'application/xml', '\u00ff', 'text/*'])]);
    else if (h < 0.85) extraHeaders.push(['idempotency-key', pick(rand, ['', ' ', 'a'.repeat(300), 'k\u00ff', `fuzz-${index}`, 'fuzz-reused', 'a b', '\t'])]);
    else if (h < 0.9) extraHeaders.push(['content-encoding', pick(rand, ['gzip', 'br', 'deflate', 'identity', 'x'])]);
    else if (h < 0.95) extraHeaders.push(['x-forwarded-for', pick(rand, ['1.2.3.4, \u00ff', '::1', 'x'.repeat(1000)])], ['x-forwarded-proto', 'gopher']);
    else if (h < 0.975) extraHeaders.push(['expect', pick(rand, ['100-continue', '200-ok'])]);
    else extraHeaders.push(['upgrade', pick(rand, ['websocket', 'h2c', 'HTTP/2.0'])], ['connection', 'Upgrade']);
  } else if (r < 0.9) {
    kind = 'method';
    method = pick(rand, METHODS);
    if (rand() < 0.5 && op.body) body = jsonBytes(realIds(op.example ?? {}, op.method, fx, rand)), (contentType = 'application/json');
  } else if (r < 0.96) {
    kind = 'wire';
    const w = rand();
    if (w < 0.3) target = Buffer.concat([Buffer.from(target.split('?')[0]!), Buffer.from(pick(rand, ['/', '?q=', '/x', '?from='])), Buffer.from(pick(rand, invalidUtf8))]).toString('latin1');
    else if (w < 0.45) target = pick(rand, [`http://evil.example${target}`, '*', target.slice(1), `/${target}`, `${target}#frag`, `${target}/`, `${target}?`, target.toUpperCase(), `${target}/..`, `${target}%2F`, `${target};x=1`]);
    else if (w < 0.55) target = `${target}?${'a'.repeat(17_000)}`;
    else if (w < 0.65) target = `${target}\t`;
    else if (w < 0.8) version = pick(rand, ['HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9', 'HTTP/1.2', 'http/1.1', 'HTTP/1.1 ']);
    else {
      framing = 'chunked';
      body = jsonBytes(realIds(op.example ?? {}, op.method, fx, rand));
      contentType = 'application/json';
    }
  } else {
    kind = 'valid';
    if (op.body) body = jsonBytes(realIds(op.example ?? {}, op.method, fx, rand)), (contentType = 'application/json');
  }

  if (auth !== null) headers.push(['authorization', auth]);
  if (contentType !== undefined && body !== undefined) headers.push(['content-type', contentType]);
  headers.push(...extraHeaders);
  let payload = body;
  if (declaredLength !== undefined) headers.push(['content-length', declaredLength]);
  else if (body !== undefined && framing === 'length') headers.push(['content-length', String(body.length)]);
  else if (body !== undefined && framing === 'chunked') {
    headers.push(['transfer-encoding', 'chunked']);
    payload = body.length === 0 ? Buffer.from('0\r\n\r\n') : Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
  } else if (framing === 'none') payload = undefined;
  headers.push(['connection', 'close']);
  const bytes = wireRequest(method, target, headers, payload, version);
  const shownBody = body === undefined ? '' : ` ${body.subarray(0, 160).toString('latin1')}${body.length > 160 ? `... (${body.length} bytes)` : ''}`;
  const host = headers.find(([n]) => n === 'host');
  const shownHeaders = [...headers.filter(([n]) => n !== 'host' && n !== 'connection' && n !== 'content-length'), ...(host?.[1] !== fx.host ? [host ?? ['host', '(none)']] : [])]
    .slice(0, 6)
    .map(([n, v]) => `${n}: ${(typeof v === 'string' ? v : Buffer.from(v).toString('latin1')).slice(0, 60)}`)
    .join('; ');
  return {
    label: `#${index} [${kind}] ${method} ${target.slice(0, 200)} ${version === 'HTTP/1.1' ? '' : version} {${shownHeaders}}${shownBody}`,
    bytes,
    method,
    head: method.toUpperCase() === 'HEAD',
  };
}
