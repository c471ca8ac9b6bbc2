import { hydrateLink, type CompiledLink, type RoutableLink } from '../../shared/routing/index.ts';
import type { LazySnapshotEntry, SnapshotEntry, SnapshotEntryHeader } from '../../shared/snapshot/snapshot-entry.ts';
import type { LinkLookup } from './ports.ts';
import { StringKeyedTable } from './string-keyed-table.ts';

/**
 * A link as received, not yet hydrated: usually still its JSON text, parsed on first
 * use (text is a third of the parsed form's memory, and most links of a large
 * snapshot are not clicked soon). Once served, the table holds its RoutableLink
 * instead (no wrapper: one pointer less to chase, and a cache miss less, per
 * request). Both carry `compiled` and `clicksLimit`.
 */
class Pending {
  readonly clicksLimit: number | null;
  private json: string;
  private parsed: CompiledLink | null;

  constructor(clicksLimit: number | null, json: string, parsed: CompiledLink | null) {
    this.clicksLimit = clicksLimit;
    this.json = json;
    this.parsed = parsed;
  }

  get compiled(): CompiledLink {
    if (this.parsed === null) {
      this.parsed = JSON.parse(this.json) as CompiledLink;
      this.json = '';
    }
    return this.parsed;
  }
}

type Held = Pending | RoutableLink;

const DEFAULT_DOMAIN = '';

/** The RoutableLink of a held link, hydrating it (and keeping the result) on first use. */
function routable(codes: StringKeyedTable<Held>, shortCode: string, held: Held): RoutableLink {
  if (!(held instanceof Pending)) return held;
  const hydrated = hydrateLink(held.compiled);
  codes.set(shortCode, hydrated);
  return hydrated;
}

/**
 * The redirector's in-memory index of links: domain -> short code -> link
 * ('' is the default redirect domain). Entries are hydrated lazily on first
 * request so loading a large snapshot stays cheap in time and memory; an entry
 * older than what we hold is ignored, so updates may arrive twice or out of
 * order (watch restarts, several publishers) safely.
 *
 * Both levels are StringKeyedTables, not Maps: find() runs on every request with the
 * Host header and short code as fresh strings, which V8 Maps look up slowly.
 */
export class SnapshotStore implements LinkLookup {
  private readonly domains = new StringKeyedTable<StringKeyedTable<Held>>();
  private readonly defaultCodes = new StringKeyedTable<Held>();
  private readonly byLinkId = new Map<string, { version: number; domain: string | null; code: string | null }>();
  private readonly clickCounts = new Map<string, number>();
  private loaded = false;
  private count = 0;
  private newestVersion = 0;
  private appliedAt = 0;

  constructor() {
    this.domains.set(DEFAULT_DOMAIN, this.defaultCodes);
  }

  /** An entry already parsed (tests, benchmarks, in-process buses). */
  apply(entry: SnapshotEntry): boolean {
    const { version, linkId, link } = entry;
    const header: SnapshotEntryHeader = { version, linkId, domain: link?.domain ?? null, shortCode: link?.shortCode ?? null, clicksLimit: link?.clicksLimit ?? null };
    return this.place(header, link === null ? null : new Pending(header.clicksLimit, '', link));
  }

  /** An entry as it comes off the bus: indexed by its header, the link parsed when first served. */
  applyLazy(entry: LazySnapshotEntry): boolean {
    const { header, linkJson } = entry;
    return this.place(header, header.shortCode === null ? null : new Pending(header.clicksLimit, linkJson, null));
  }

  private place(header: SnapshotEntryHeader, pending: Pending | null): boolean {
    const known = this.byLinkId.get(header.linkId);
    if (known && known.version >= header.version) return false;
    // For metrics (snapshot version, last update age). Not on the request path: the
    // clock read is small next to decoding the entry it follows.
    if (header.version > this.newestVersion) this.newestVersion = header.version;
    this.appliedAt = Date.now();
    if (known?.domain != null && known.code !== null) {
      if (this.domains.get(known.domain)?.delete(known.code)) this.count--;
    }
    if (pending === null || header.domain === null || header.shortCode === null) {
      this.byLinkId.set(header.linkId, { version: header.version, domain: null, code: null });
      return true;
    }
    const { domain, shortCode } = header;
    let codes = this.domains.get(domain);
    if (!codes) this.domains.set(domain, (codes = new StringKeyedTable()));
    if (!codes.has(shortCode)) this.count++;
    codes.set(shortCode, pending);
    this.byLinkId.set(header.linkId, { version: header.version, domain, code: shortCode });
    return true;
  }

  /** `host` as the Host header sent it, lowercased; custom domains are registered without a port. */
  find(host: string, shortCode: string): RoutableLink | undefined {
    if (host !== DEFAULT_DOMAIN) {
      const codes = this.domains.get(host);
      const held = codes?.get(shortCode);
      if (held !== undefined) return routable(codes!, shortCode, held);
    }
    const held = this.defaultCodes.get(shortCode);
    return held === undefined ? undefined : routable(this.defaultCodes, shortCode, held);
  }

  /** The link a (verified) click id names, wherever it is served. */
  findById(linkId: string): RoutableLink | undefined {
    const known = this.byLinkId.get(linkId);
    if (!known || known.domain === null || known.code === null) return undefined;
    const codes = this.domains.get(known.domain);
    const held = codes?.get(known.code);
    return held === undefined ? undefined : routable(codes!, known.code, held);
  }

  clicks(linkId: string): number {
    return this.clickCounts.get(linkId) ?? 0;
  }

  /** Sets the shared click count of a link (sum over all redirectors). */
  setClicks(linkId: string, count: number): void {
    this.clickCounts.set(linkId, count);
  }

  /** clicksLimit of a served link, or null (no limit, or not served). */
  clicksLimit(linkId: string): number | null {
    const known = this.byLinkId.get(linkId);
    if (!known || known.domain === null || known.code === null) return null;
    return this.domains.get(known.domain)?.get(known.code)?.clicksLimit ?? null;
  }

  version(linkId: string): number {
    return this.byLinkId.get(linkId)?.version ?? 0;
  }

  /** Whether the full snapshot present at start has been applied (false during a full reload). */
  setReady(ready: boolean): void {
    this.loaded = ready;
  }

  ready(): boolean {
    return this.loaded;
  }

  get size(): number {
    return this.count;
  }

  /** The highest snapshot version applied so far (0: none). */
  get highestVersion(): number {
    return this.newestVersion;
  }

  /** Epoch ms when an entry was last applied (0: none yet). */
  get lastAppliedAt(): number {
    return this.appliedAt;
  }
}
