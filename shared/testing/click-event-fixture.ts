import { clickEventFields, type ClickEvent } from '../schemas/click-event.ts';
import type { ValueKind } from '../schemas/event-field.ts';

/**
 * A click event for tests and benchmarks, made from the declaration (clickEventFields):
 * every field, in declaration order (the order redirectors write, the only one the
 * ingester's fast path reads), nullable ones null and the others the simplest value
 * their kind accepts, except the `fields` given. A field added to the declaration
 * needs nothing here.
 */
export function sampleClickEvent(fields: Partial<ClickEvent> = {}): ClickEvent {
  const event: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(clickEventFields)) event[key] = key in fields ? fields[key as keyof ClickEvent] : simplest(field.kind);
  return event as ClickEvent;
}

function simplest(kind: ValueKind): unknown {
  if (kind.nullable) return null;
  const json = kind.json;
  switch (json.type) {
    case 'string':
      return (json.prefix ?? '').padEnd(json.length ?? 0, 'x');
    case 'enum':
      return json.values[0];
    case 'safeint':
      return json.min;
    case 'boolean':
      return false;
  }
}
