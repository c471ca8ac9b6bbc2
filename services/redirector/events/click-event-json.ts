/**
 * ClickEvent -> one line of the bus's newline-delimited JSON (see eventSubjects).
 *
 * Why not JSON.stringify: it runs once per redirect on the serving thread, and for this
 * fixed, flat shape a direct template is cheaper (no generic property walk, and the
 * known-safe common case of each string needs only a regex test, no escaping pass).
 *
 * The text is exactly JSON.stringify(event) for an event whose keys are in the schema's
 * order (as serve-link builds them), checked in click-event-json.test.ts. Keys outside the
 * schema are not written (the ingester's schema would strip them anyway); a field of the
 * wrong type at run time makes the whole event go through JSON.stringify instead, so the
 * output is always valid JSON.
 */
import type { ClickEvent } from '../../../shared/schemas/click-event.ts';

/** What JSON.stringify would escape in a string: `"`, `\`, C0 controls, and surrogates (lone ones). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** Every key of ClickEvent in the schema's order; the type check below fails when the schema gains one. */
export const CLICK_EVENT_KEYS = [
  'id',
  'kind',
  'ts',
  'workspaceId',
  'linkId',
  'campaignId',
  'visitorId',
  'country',
  'deviceClass',
  'os',
  'browser',
  'referrerHost',
  'utmSource',
  'utmMedium',
  'utmCampaign',
  'utmTerm',
  'utmContent',
  'source',
  'ruleId',
  'destination',
  'bot',
] as const satisfies ReadonlyArray<keyof ClickEvent>;

type Unwritten = Exclude<keyof ClickEvent, (typeof CLICK_EVENT_KEYS)[number]>;
// A compile error here means ClickEvent has a key clickEventJson does not write.
const everyKeyWritten: [Unwritten] extends [never] ? true : Unwritten = true;
void everyKeyWritten;

/** Set by the helpers when a value has the wrong type; checked once per event. */
let malformed = false;

function text(value: unknown): string {
  if (typeof value !== 'string') {
    malformed = true;
    return '';
  }
  return NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
}

function nullableText(value: unknown): string {
  return value === null ? 'null' : text(value);
}

export function clickEventJson(event: ClickEvent): string {
  malformed = false;
  const ts = event.ts;
  const bot = event.bot;
  if (typeof ts !== 'number' || !Number.isFinite(ts) || typeof bot !== 'boolean') return JSON.stringify(event);
  const json =
    '{"id":' +
    text(event.id) +
    ',"kind":' +
    text(event.kind) +
    ',"ts":' +
    ts +
    ',"workspaceId":' +
    text(event.workspaceId) +
    ',"linkId":' +
    text(event.linkId) +
    ',"campaignId":' +
    text(event.campaignId) +
    ',"visitorId":' +
    text(event.visitorId) +
    ',"country":' +
    nullableText(event.country) +
    ',"deviceClass":' +
    text(event.deviceClass) +
    ',"os":' +
    nullableText(event.os) +
    ',"browser":' +
    nullableText(event.browser) +
    ',"referrerHost":' +
    nullableText(event.referrerHost) +
    ',"utmSource":' +
    nullableText(event.utmSource) +
    ',"utmMedium":' +
    nullableText(event.utmMedium) +
    ',"utmCampaign":' +
    nullableText(event.utmCampaign) +
    ',"utmTerm":' +
    nullableText(event.utmTerm) +
    ',"utmContent":' +
    nullableText(event.utmContent) +
    ',"source":' +
    text(event.source) +
    ',"ruleId":' +
    nullableText(event.ruleId) +
    ',"destination":' +
    nullableText(event.destination) +
    ',"bot":' +
    (bot ? 'true' : 'false') +
    '}';
  return malformed ? JSON.stringify(event) : json;
}
