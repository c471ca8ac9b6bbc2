/** What an insert body is built in: a Native block, or rows of text (event-tables.ts). */
export interface BatchBody {
  bytes(): Buffer;
}

const NONE: ReadonlySet<string> = new Set();

/**
 * One insert's events: their rows, already in the insert's format (`body`),
 * and what the ingester must know of them: each id (dedup token and duplicate
 * check), the oldest time (lag figure), the time range (duplicate check) and, when
 * asked for, each link id.
 *
 * Each event id goes in once: writers ask accepts(id) before writing a row and
 * write nothing when it says no (the id is already in the batch, or among
 * `skip`, the events ClickHouse is known to have), then record the row with add().
 */
export class EventBatch<Body extends BatchBody = BatchBody> {
  readonly body: Body;
  readonly ids: string[] = [];
  /** Link ids, in the order of `ids`; kept only when asked for (they cost a string per event). */
  readonly linkIds: string[] | null;
  /** The oldest event time (ms); +Infinity while empty. */
  oldestTs = Number.POSITIVE_INFINITY;
  /** The newest event time (ms); -Infinity while empty. */
  newestTs = Number.NEGATIVE_INFINITY;
  private readonly seen = new Set<string>();
  private readonly skip: ReadonlySet<string>;

  constructor(body: Body, options: { skip?: ReadonlySet<string>; keepLinkIds?: boolean } = {}) {
    this.body = body;
    this.skip = options.skip ?? NONE;
    this.linkIds = options.keepLinkIds ? [] : null;
  }

  get count(): number {
    return this.ids.length;
  }

  /** Whether a row for this id is to be written (then it must be, and add()ed). */
  accepts(id: string): boolean {
    if (this.seen.has(id) || this.skip.has(id)) return false;
    this.seen.add(id);
    return true;
  }

  /** Whether the batch holds a row for `id`. */
  holds(id: string): boolean {
    return this.seen.has(id);
  }

  /** Records the row just written for `id`; `linkId` matters only when link ids are kept. */
  add(id: string, ts: number, linkId?: string): void {
    this.ids.push(id);
    if (ts < this.oldestTs) this.oldestTs = ts;
    if (ts > this.newestTs) this.newestTs = ts;
    this.linkIds?.push(linkId!);
  }
}
