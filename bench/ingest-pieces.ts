/**
 * The hand-written piece of the ingester still kept, against what it replaces, in
 * process: the fast line path (services/ingester/fast-line.ts) against JSON.parse +
 * the zod schema + the row, each reading the same bus messages (redirector batches,
 * keys in declaration order) into a Native block, their batches taking turns. The row
 * gives what the fast path saves per event as a share of the backlog drain's time per
 * event measured in the same run (a hand-written piece stays only where it buys at
 * least 5 % of the end-to-end figure).
 */
import { EventBatch } from '../services/ingester/event-batch.ts';
import { clickEvents, type EventTable } from '../services/ingester/event-tables.ts';
import { readMessage } from '../services/ingester/read-message.ts';
import type { EventRow } from '../shared/clickhouse/events-table.ts';
import type { NativeBlockWriter } from '../shared/clickhouse/native-block.ts';
import type { Row } from './suite.ts';
import { nsPerCallEach } from './timing.ts';

/** The click table as the ingester would be without its fast path: every line the zod way. */
const zodOnly: EventTable<EventRow, NativeBlockWriter> = { ...clickEvents, fastLine: undefined };

/**
 * `message`: one bus message of `events` lines; `backlogNsPerEvent`: the backlog drain's
 * time per event in the same run. `rounds` sizes the timing (batches of 8 messages each way).
 */
export function measureIngestPieces(message: Uint8Array, events: number, backlogNsPerEvent: number, rounds = 12): Row[] {
  const read = (kind: EventTable<EventRow, NativeBlockWriter>) => () => {
    // A fresh batch per message: one that already holds the ids would write nothing.
    const batch = new EventBatch(kind.newBody(message.length));
    const { invalid } = readMessage(kind, message, batch);
    if (invalid.length > 0 || batch.count !== events) throw new Error(`read ${batch.count} of ${events} events, ${invalid.length} invalid`);
    return batch;
  };
  const [fastNs, zodNs] = nsPerCallEach([read(clickEvents), read(zodOnly)], 8, rounds).map((ns) => ns / events);
  const saving = zodNs! - fastNs!;
  return [
    {
      name: 'a bus message into the Native block, per event (fast-line.ts)',
      'hand-written ns': Math.round(fastNs!),
      library: 'JSON.parse + zod schema + row',
      'library ns': Math.round(zodNs!),
      'saved ns/event': Math.round(saving),
      '% of backlog drain time/event': Number(((saving / backlogNsPerEvent) * 100).toFixed(1)),
      // Every event would take the zod way: the drain's time per event grows by the saving.
      'backlog events/s without it (est.)': Math.round(1e9 / (backlogNsPerEvent + saving)),
    },
  ];
}
