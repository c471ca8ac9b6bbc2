import type { EventOrigin } from '../../shared/click-id-origin.ts';
import type { BatchBody, EventBatch } from './event-batch.ts';
import type { EventRowBase, EventTable } from './event-tables.ts';

const decoder = new TextDecoder();
const NEWLINE = 0x0a;

/**
 * Appends the events of one bus message (newline-delimited JSON) to `batch`, in
 * line order, each id once (see EventBatch.accepts); returns the lines that can
 * never be stored: `invalid` ones, and with `genuine`, `forged` ones (valid events
 * that no redirector of this deployment sent, see shared/click-id-origin.ts).
 *
 * Each line tries the kind's fast path on its bytes; any line it declines goes
 * the zod way: JSON.parse, the schema, then the row. Lines are cut at newline
 * bytes, which is where the decoded text has its '\n' (UTF-8 has no 0x0a inside
 * a character, and the decoder turns no other byte into one), so the message is
 * decoded, once, only when some line needs the zod way.
 */
export function readMessage<Row extends EventRowBase, Body extends BatchBody>(
  kind: EventTable<Row, Body>,
  data: Uint8Array,
  batch: EventBatch<Body>,
  genuine?: EventOrigin,
): { invalid: string[]; forged: string[] } {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const invalid: string[] = [];
  const forged: string[] = [];
  let texts: string[] | null = null;
  let start = 0;
  for (let index = 0; start < bytes.length || index === 0; index++) {
    let end = bytes.indexOf(NEWLINE, start);
    if (end < 0) end = bytes.length;
    // The fast path declines a forged line too: the zod path below tells it from an invalid one.
    if (end > start && !kind.fastLine?.(bytes, start, end, batch, genuine)) {
      texts ??= decoder.decode(bytes).split('\n');
      const line = texts[index]!;
      // A line that decodes to nothing (a lone byte-order mark) is skipped, as an empty one.
      if (line !== '') {
        const row = parseLine(kind.parse, line);
        if (!row) {
          invalid.push(line);
        } else {
          const id = row[kind.idColumn] as unknown as string;
          if (genuine !== undefined && !genuine(id, row.link_id, row.ts)) {
            forged.push(line);
          } else if (batch.accepts(id)) {
            kind.write(batch.body, row);
            batch.add(id, row.ts, row.link_id);
          }
        }
      }
    }
    start = end + 1;
  }
  return { invalid, forged };
}

function parseLine<Row>(parse: (json: unknown) => Row | null, line: string): Row | null {
  let json: unknown;
  try {
    json = JSON.parse(line);
  } catch (err) {
    if (err instanceof SyntaxError) return null; // not JSON
    throw err;
  }
  return parse(json);
}
