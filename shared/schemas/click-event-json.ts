/**
 * ClickEvent -> one line of the bus's newline-delimited JSON (see eventSubjects),
 * written from the declaration (clickEventFields): its keys in declaration order,
 * which is the form the ingester's fast path reads without JSON.parse.
 *
 * The text is exactly JSON.stringify(event) for an event whose keys are in
 * declaration order, checked in click-event-json.test.ts. Keys outside the
 * declaration are not written (the ingester's schema would strip them anyway);
 * a field of the wrong type at run time makes the whole event go through
 * JSON.stringify instead, so the output is always valid JSON.
 */
import { clickEventFields, type ClickEvent } from './click-event.ts';

/** What JSON.stringify would escape in a string: `"`, `\`, C0 controls, and surrogates (lone ones). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

const STRING = 0;
const NUMBER = 1;
const BOOLEAN = 2;

const fields = Object.entries(clickEventFields);
const keys = fields.map(([key]) => key);
/** `{"id":`, `,"kind":`, ...: the text before each value. */
const leads = keys.map((key, i) => `${i === 0 ? '{' : ','}${JSON.stringify(key)}:`);
const forms = fields.map(([, f]) => (f.kind.json.type === 'safeint' ? NUMBER : f.kind.json.type === 'boolean' ? BOOLEAN : STRING));
const nullable = fields.map(([, f]) => f.kind.nullable);

export function clickEventJson(event: ClickEvent): string {
  const values = event as unknown as Record<string, unknown>;
  let json = '';
  for (let i = 0; i < keys.length; i++) {
    const value = values[keys[i]!];
    json += leads[i];
    if (typeof value === 'string' && forms[i] === STRING) json += NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`;
    else if (value === null && nullable[i]) json += 'null';
    else if (typeof value === 'number' && forms[i] === NUMBER && Number.isFinite(value)) json += value;
    else if (typeof value === 'boolean' && forms[i] === BOOLEAN) json += value ? 'true' : 'false';
    else return JSON.stringify(event);
  }
  return `${json}}`;
}
