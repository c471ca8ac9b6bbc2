import type { z } from 'zod';
import { clickEventFields, type ClickEvent } from '../schemas/click-event.ts';
import { valueEncoding, type RowSink } from './binary-writer.ts';

type Fields = typeof clickEventFields;

/** What a column holds for a field: the field's value without null (stored as ''); strings typed loosely, but Enum8 values exactly. */
type Stored<F extends Fields[keyof Fields]> =
  Exclude<z.output<F['kind']['zod']>, null> extends infer V ? (V extends string ? (F['columnType'] extends `Enum8(${string}` ? V : string) : V) : never;

/** A row of the ClickHouse `events` table (clickhouse/0001_events.sql and later), as the declaration maps it; '' stands for unknown. */
export type EventRow = { [K in keyof Fields as Fields[K]['column']]: Stored<Fields[K]> };

export interface EventColumn {
  name: keyof EventRow;
  /** As ClickHouse prints it. */
  type: string;
  /** The ClickEvent field it stores. */
  key: keyof ClickEvent;
}

/**
 * The `events` columns an insert names, in declaration order (ingested_at is left
 * to its DEFAULT). RowBinary and Native carry no meaning of their own: these must
 * be the table's, which events-table.int.test.ts checks after the migrations.
 */
export const EVENT_COLUMNS: readonly EventColumn[] = Object.entries(clickEventFields).map(([key, f]) => ({
  name: f.column,
  type: f.columnType,
  key: key as keyof ClickEvent,
}));

export function toEventRow(event: ClickEvent): EventRow {
  const row: Record<string, unknown> = {};
  // DateTime64(3) reads an integer as milliseconds, so `ts` goes in as it is.
  for (const { name, key } of EVENT_COLUMNS) row[name] = event[key] ?? '';
  return row as EventRow;
}

type WriteValue = (w: RowSink, value: unknown) => void;

function valueWriter(type: string): WriteValue {
  const encoding = valueEncoding(type);
  switch (encoding.kind) {
    case 'string':
      return (w, v) => w.string(v as string);
    case 'int64':
      return (w, v) => w.int64(v as number);
    case 'bool':
      return (w, v) => w.byte(v ? 1 : 0);
    case 'enum8':
      return (w, v) => w.byte(encoding.codes.get(v as string)!);
  }
}

const writers = EVENT_COLUMNS.map((c) => ({ name: c.name, write: valueWriter(c.type) }));

/** One `events` row, columns in EVENT_COLUMNS order: RowBinary bytes, or a row of a Native block. */
export function writeEventRow(w: RowSink, row: EventRow): void {
  const values = row as Record<string, unknown>;
  for (const { name, write } of writers) write(w, values[name]);
}
