import { valueEncoding } from '../../shared/clickhouse/binary-writer.ts';
import type { EventField, JsonForm } from '../../shared/schemas/event-field.ts';

/**
 * What the fast line path (fast-line.ts) checks and writes, read off an event's
 * declaration (clickEventFields): per field, the exact JSON text before its value,
 * the value's JSON form (the same description its zod schema is built from), and
 * how its column is written. Only forms whose zod meaning is exactly reproducible
 * on printable-ASCII JSON are supported; for anything else the plan is null and
 * every line takes the zod path. Part of the fast line path: why it is kept, the
 * figure and the command that measures it are on top of fast-line.ts.
 */
export type FieldValue =
  | { type: 'string'; prefix: Uint8Array | null; length: number | null }
  | { type: 'enum'; values: readonly string[]; bytes: Uint8Array[] }
  | { type: 'safeint'; min: number; max: number }
  | { type: 'boolean' };

export interface FieldRule {
  key: string;
  /** `{"key":` for the first field, `,"key":` for the others: the exact text before the value. */
  lead: Uint8Array;
  nullable: boolean;
  value: FieldValue;
}

/** How a field's column is written; columns are the fields, in the same order. */
export type ColumnWrite = { write: 'string' } | { write: 'enum8'; codes: Uint8Array } | { write: 'int64' } | { write: 'bool' };

export interface FastLinePlan {
  fields: FieldRule[];
  columns: ColumnWrite[];
  /** Fields holding the event id, its link id and its time. */
  idField: number;
  linkField: number;
  tsField: number;
}

const ascii = new TextEncoder();

function fieldValue(json: JsonForm): FieldValue | null {
  switch (json.type) {
    case 'string':
      if (json.prefix !== null && !isPrintableAscii(json.prefix)) return null;
      return { type: 'string', prefix: json.prefix === null ? null : ascii.encode(json.prefix), length: json.length };
    case 'enum':
      if (!json.values.every(isPrintableAscii)) return null;
      return { type: 'enum', values: json.values, bytes: json.values.map((v) => ascii.encode(v)) };
    default:
      return json;
  }
}

/**
 * The plan for an event's declared fields, or null if a field's value and its
 * column's type do not pair up in a way the fast path writes exactly like the zod path.
 */
export function fastLinePlan(declaration: Readonly<Record<string, EventField>>, keys: { id: string; link: string; ts: string }): FastLinePlan | null {
  const fields: FieldRule[] = [];
  const columns: ColumnWrite[] = [];
  for (const [key, { kind, columnType }] of Object.entries(declaration)) {
    const value = fieldValue(kind.json);
    if (!value || !/^[A-Za-z0-9_]+$/.test(key)) return null;
    fields.push({ key, lead: ascii.encode(`${fields.length === 0 ? '{' : ','}"${key}":`), nullable: kind.nullable, value });
    const encoding = valueEncoding(columnType);
    if (encoding.kind === 'string') {
      if (value.type !== 'string' && value.type !== 'enum') return null;
      columns.push({ write: 'string' });
    } else if (encoding.kind === 'enum8') {
      if (value.type !== 'enum' || kind.nullable || !value.values.every((v) => encoding.codes.has(v))) return null;
      columns.push({ write: 'enum8', codes: Uint8Array.from(value.values, (v) => encoding.codes.get(v)! & 0xff) });
    } else if (encoding.kind === 'int64') {
      if (value.type !== 'safeint' || kind.nullable) return null;
      columns.push({ write: 'int64' });
    } else {
      if (value.type !== 'boolean' || kind.nullable) return null;
      columns.push({ write: 'bool' });
    }
  }
  const index = (key: string) => fields.findIndex((f) => f.key === key);
  const [idField, linkField, tsField] = [index(keys.id), index(keys.link), index(keys.ts)];
  if (idField < 0 || linkField < 0 || tsField < 0) return null;
  if (fields[idField]!.nullable || fields[linkField]!.nullable || fields[tsField]!.value.type !== 'safeint') return null;
  return { fields, columns, idField, linkField, tsField };
}

function isPrintableAscii(text: string): boolean {
  return /^[\x20-\x7e]*$/.test(text) && !/["\\]/.test(text);
}
