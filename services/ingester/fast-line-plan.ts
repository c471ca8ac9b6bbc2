import { enumCodes } from '../../shared/clickhouse/event-row-binary.ts';

/**
 * What the fast line path (fast-line.ts) checks and writes, derived from the
 * zod schema of the event and the insert's columns (name, ClickHouse type), so
 * neither is restated by hand. Only constructs whose zod meaning is exactly reproducible
 * on printable-ASCII JSON are supported; for anything else the plan is null and
 * every line takes the zod path.
 */
export type FieldValue =
  | { type: 'string'; prefix: Uint8Array | null; length: number | null }
  | { type: 'enum'; values: string[]; bytes: Uint8Array[] }
  | { type: 'safeint' }
  | { type: 'boolean' };

export interface FieldRule {
  key: string;
  /** `{"key":` for the first field, `,"key":` for the others: the exact text before the value. */
  lead: Uint8Array;
  nullable: boolean;
  value: FieldValue;
}

/** How one column's value is written from a field (by index into the rules); columns in insert order. */
export type ColumnWrite =
  | { write: 'string'; field: number }
  | { write: 'enum8'; field: number; codes: Uint8Array }
  | { write: 'int64'; field: number }
  | { write: 'bool'; field: number };

export interface FastLinePlan {
  fields: FieldRule[];
  columns: ColumnWrite[];
  /** Fields holding the event id, its link id and its time. */
  idField: number;
  linkField: number;
  tsField: number;
}

/** The zod internals read here (zod 4's public `def`). */
interface Def {
  type: string;
  innerType?: { def: Def };
  entries?: Record<string, unknown>;
  checks?: Array<{ _zod: { def: { check: string; format?: string; prefix?: string; length?: number } } }>;
  shape?: Record<string, { def: Def }>;
}

const ascii = new TextEncoder();

export function fieldRules(schema: { def: unknown }): FieldRule[] | null {
  const def = schema.def as Def;
  if (def.type !== 'object' || !def.shape) return null;
  const rules: FieldRule[] = [];
  for (const [key, field] of Object.entries(def.shape)) {
    if (!/^[A-Za-z0-9_]+$/.test(key)) return null;
    let d = field.def;
    const nullable = d.type === 'nullable';
    if (nullable) d = d.innerType!.def;
    const value = fieldValue(d);
    if (!value) return null;
    rules.push({ key, lead: ascii.encode(`${rules.length === 0 ? '{' : ','}"${key}":`), nullable, value });
  }
  return rules;
}

function fieldValue(d: Def): FieldValue | null {
  const checks = (d.checks ?? []).map((c) => c._zod.def);
  switch (d.type) {
    case 'string': {
      let prefix: Uint8Array | null = null;
      let length: number | null = null;
      for (const c of checks) {
        if (c.check === 'string_format' && c.format === 'starts_with' && isPrintableAscii(c.prefix!)) prefix = ascii.encode(c.prefix!);
        else if (c.check === 'length_equals') length = c.length!;
        else return null;
      }
      return { type: 'string', prefix, length };
    }
    case 'enum': {
      const values = Object.values(d.entries ?? {});
      if (checks.length > 0 || !values.every((v): v is string => typeof v === 'string' && isPrintableAscii(v))) return null;
      return { type: 'enum', values, bytes: values.map((v) => ascii.encode(v)) };
    }
    case 'number':
      return checks.length === 1 && checks[0]!.check === 'number_format' && checks[0]!.format === 'safeint' ? { type: 'safeint' } : null;
    case 'boolean':
      return checks.length === 0 ? { type: 'boolean' } : null;
    default:
      return null;
  }
}

/**
 * The plan for writing `columns` (name, ClickHouse type) from `sources`
 * (column -> event key, null standing for ''), or null if a column's type and
 * its field do not pair up in a way the fast path writes exactly like the zod path.
 */
export function fastLinePlan(
  schema: { def: unknown },
  columns: ReadonlyArray<{ name: string; type: string }>,
  sources: Readonly<Record<string, string>>,
  keys: { id: string; link: string; ts: string },
): FastLinePlan | null {
  const fields = fieldRules(schema);
  if (!fields) return null;
  const index = (key: string) => fields.findIndex((f) => f.key === key);
  const writes: ColumnWrite[] = [];
  for (const column of columns) {
    const field = index(sources[column.name] ?? '');
    if (field < 0) return null;
    const { value, nullable } = fields[field]!;
    if (column.type === 'String' || column.type === 'LowCardinality(String)') {
      if (value.type !== 'string' && value.type !== 'enum') return null;
      writes.push({ write: 'string', field });
    } else if (/^Enum8\(/.test(column.type)) {
      if (value.type !== 'enum' || nullable) return null;
      const codes = enumCodes(column.type);
      if (!value.values.every((v) => codes.has(v))) return null;
      writes.push({ write: 'enum8', field, codes: Uint8Array.from(value.values, (v) => codes.get(v)! & 0xff) });
    } else if (column.type === "DateTime64(3, 'UTC')" || column.type === 'Int64') {
      if (value.type !== 'safeint' || nullable) return null;
      writes.push({ write: 'int64', field });
    } else if (column.type === 'Bool') {
      if (value.type !== 'boolean' || nullable) return null;
      writes.push({ write: 'bool', field });
    } else {
      return null;
    }
  }
  const [idField, linkField, tsField] = [index(keys.id), index(keys.link), index(keys.ts)];
  if (idField < 0 || linkField < 0 || tsField < 0) return null;
  if (fields[idField]!.nullable || fields[linkField]!.nullable || fields[tsField]!.value.type !== 'safeint') return null;
  return { fields, columns: writes, idField, linkField, tsField };
}

function isPrintableAscii(text: string): boolean {
  return /^[\x20-\x7e]*$/.test(text) && !/["\\]/.test(text);
}
