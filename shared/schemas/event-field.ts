import { z } from 'zod';
import { eventEpochMs } from './common.ts';

/**
 * The kinds of value an event field holds, for declarations such as
 * clickEventFields (click-event.ts). Each kind says at once how the field is
 * validated (its zod schema) and how it looks in the JSON that redirectors write
 * (`json`, what the ingester's fast path reads byte by byte and the event's
 * serializer writes), so the two are never restated apart.
 *
 * Invariant: a value is accepted by `zod` exactly when it has the `json` form
 * (fast-line.test.ts checks the ingester's reading of it against zod).
 */
export type JsonForm =
  /** A string; `prefix` and `length` (UTF-16 units) are checks zod makes too. */
  | { type: 'string'; prefix: string | null; length: number | null }
  | { type: 'enum'; values: readonly string[] }
  /** A safe integer (zod's .int()) from `min` to `max`, inclusive. */
  | { type: 'safeint'; min: number; max: number }
  | { type: 'boolean' };

export interface ValueKind<Z extends z.ZodType = z.ZodType> {
  zod: Z;
  json: JsonForm;
  /** null is a value of the field (stored as the column's empty value). */
  nullable: boolean;
}

/** A string, optionally with a fixed prefix or an exact length. */
export function text(checks: { startsWith?: string; length?: number } = {}): ValueKind<z.ZodString> {
  let zod = z.string();
  if (checks.startsWith !== undefined) zod = zod.startsWith(checks.startsWith);
  if (checks.length !== undefined) zod = zod.length(checks.length);
  return { zod, json: { type: 'string', prefix: checks.startsWith ?? null, length: checks.length ?? null }, nullable: false };
}

/** One of a fixed list of strings. */
export function oneOf<const V extends readonly [string, ...string[]]>(values: V) {
  return { zod: z.enum(values), json: { type: 'enum', values }, nullable: false } satisfies ValueKind;
}

/**
 * A time as epoch milliseconds, a safe integer within what the event tables' DateTime64(3)
 * columns hold (common.ts eventEpochMs): ClickHouse would store a time past them as another
 * (clamped on reading, in a partition of its own), never as sent.
 */
export function epochMs(): ValueKind<z.ZodNumber> {
  const { min, max } = eventEpochMs;
  return { zod: z.number().int().min(min).max(max), json: { type: 'safeint', min, max }, nullable: false };
}

export function flag(): ValueKind<z.ZodBoolean> {
  return { zod: z.boolean(), json: { type: 'boolean' }, nullable: false };
}

/** The kind, or null. */
export function nullable<Z extends z.ZodType>(kind: ValueKind<Z>): ValueKind<z.ZodNullable<Z>> {
  return { zod: kind.zod.nullable(), json: kind.json, nullable: true };
}

/**
 * One field of an event stored in ClickHouse: its kind, and the column that
 * stores it, with the column's type exactly as ClickHouse prints it (DESCRIBE
 * TABLE), so a test can hold the migrations to the declaration.
 */
export interface EventField<Z extends z.ZodType = z.ZodType, C extends string = string, T extends string = string> {
  kind: ValueKind<Z>;
  column: C;
  columnType: T;
}

export function field<Z extends z.ZodType, const C extends string, const T extends string>(kind: ValueKind<Z>, column: C, columnType: T): EventField<Z, C, T> {
  return { kind, column, columnType };
}

/** The zod object of a declaration, keys in declaration order. */
export function eventSchema<F extends Record<string, EventField>>(fields: F): z.ZodObject<{ [K in keyof F]: F[K]['kind']['zod'] }> {
  const shape = Object.fromEntries(Object.entries(fields).map(([key, f]) => [key, f.kind.zod]));
  return z.object(shape) as z.ZodObject<{ [K in keyof F]: F[K]['kind']['zod'] }>;
}
