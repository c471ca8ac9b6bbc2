import { hydrateLink, type CompiledLink, type RoutableLink } from '../../../shared/routing/index.ts';
import type { DomainEntry, LazySnapshotEntry, SnapshotEntry, SnapshotEntryHeader } from '../../../shared/snapshot/snapshot-entry.ts';
import { decompressBlock } from '../../../shared/snapshot/snapshot-blocks.ts';
import type { LinkLookup } from '../ports.ts';

const decoder = new TextDecoder();

/**
 * A link as received, not yet hydrated: its JSON text, or where that text is in a
 * compressed block of the compacted snapshot, parsed on first use (text is a third
 * of the parsed form's memory, a block's share a few percent of it, and most links
 * of a large snapshot are not clicked soon). Once served, the table holds its
 * RoutableLink instead (no wrapper: one pointer less to chase, and a cache miss
 * less, per request). Both carry `compiled` and `clicksLimit`.
 */
class Pending {
  /** Whose entry it is, known without parsing (a removal checks the slot still holds it). */
  readonly linkId: string;
  readonly clicksLimit: number | null;
  /** The JSON text ('' when it is in `block`, or once parsed). */
  private json: string;
  private parsed: CompiledLink | null;
  /** The compressed block holding the JSON at [start, end) once decompressed (null: the text is in `json`). */
  private block: Uint8Array | null;
  private readonly start: number;
  private readonly end: number;

  constructor(linkId: string, clicksLimit: number | null, json: string, parsed: CompiledLink | null, block: Uint8Array | null = null, start = 0, end = 0) {
    this.linkId = linkId;
    this.clicksLimit = clicksLimit;
    this.json = json;
    this.parsed = parsed;
    this.block = block;
    this.start = start;
    this.end = end;
  }

  get compiled(): CompiledLink {
    if (this.parsed === null) {
      const text = this.block === null ? this.json : decoder.decode(decompressBlock(this.block).subarray(this.start, this.end));
      this.parsed = JSON.parse(text) as CompiledLink;
      this.json = '';
      this.block = null;
    }
    return this.parsed;
  }
}

type Held = Pending | RoutableLink;

/**
 * One domain's links by short code, and how many domain markers name the hostname: its
 * verified domain's, and those of its domains deleted or failed after they were verified
 * (tombstones: a hostname added again is a new domain, of another workspace maybe).
 */
class DomainCodes extends Map<string, Held> {
  markers = 0;

  /**
   * Serves only its own links: it is or was verified (a marker, a tombstone's too: a
   * deleted domain's codes 404, never another workspace's default-domain link of the
   * same code) or holds links (published only while verified).
   */
  get isCustomDomain(): boolean {
    return this.markers > 0 || this.size > 0;
  }
}

const DEFAULT_DOMAIN = '';

/** The RoutableLink of a held link, hydrating it (and keeping the result) on first use. */
function routable(codes: Map<string, Held>, shortCode: string, held: Held): RoutableLink {
  if (!(held instanceof Pending)) return held;
  const hydrated = hydrateLink(held.compiled);
  codes.set(shortCode, hydrated);
  return hydrated;
}

/**
 * The redirector's in-memory index of links: domain -> short code -> link
 * ('' is the default redirect domain). A custom domain answers only its own links:
 * a Host that is one (a domain's marker names it, verified now or before, or it holds
 * links) never falls back to the default domain, so no workspace's default-domain link
 * answers on another's domain, also once that domain is deleted or failed; any other
 * Host gets the default domain. Both follow from the
 * entries held, so every redirector decides alike. Entries are hydrated lazily on first
 * request so loading a large snapshot stays cheap in time and memory; an entry
 * older than what we hold is ignored, so updates may arrive twice or out of
 * order (watch restarts, several publishers) safely.
 *
 * Both levels are plain Maps. A hand-written string-keyed hash table stood here (for
 * the fresh Host and short-code strings each request brings); replaced because it did
 * not buy the 5 % of the redirect figure a hand-written piece must (issue 15):
 * `npm run bench:against` with 7 alternating rounds, 100k codes, 2026-11-29, had the
 * Maps at +12.8 % redirects/s and -5.9 % server CPU a request against it, within
 * that run's noise (rounds spread 35-45 %); the earlier machine's best case for the
 * table was -4.6 % CPU a request.
 */
export class SnapshotStore implements LinkLookup {
  private domains = new Map<string, DomainCodes>();
  private defaultCodes = new DomainCodes();
  private readonly byLinkId = new Map<string, { version: number; domain: string | null; code: string | null }>();
  /** Domain markers applied: the hostname each names once verified, tombstones too (null: never verified). */
  private readonly byDomainId = new Map<string, { version: number; hostname: string | null }>();
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
    return this.place(header, link === null ? null : new Pending(linkId, header.clicksLimit, '', link));
  }

  /** A domain marker already parsed (tests). */
  applyDomain(entry: DomainEntry): boolean {
    return this.place({ version: entry.version, linkId: entry.domainId, domain: entry.hostname, shortCode: null, clicksLimit: null, kind: 'domain' }, null);
  }

  /** An entry as it comes off the bus: indexed by its header, the link parsed when first served. */
  applyLazy(entry: LazySnapshotEntry): boolean {
    const { header, linkJson } = entry;
    return this.place(header, header.shortCode === null ? null : new Pending(header.linkId, header.clicksLimit, linkJson, null));
  }

  /**
   * An entry of the compacted snapshot, indexed by its header; its link's JSON stays
   * in the compressed `block`, at [start, end) of its frames, until first served (the
   * block is decompressed again then, ~30 µs).
   */
  applyPacked(header: SnapshotEntryHeader, block: Uint8Array, start: number, end: number): boolean {
    return this.place(header, header.shortCode === null ? null : new Pending(header.linkId, header.clicksLimit, '', null, block, start, end));
  }

  /**
   * Forgets every link (not the click counts): for a load that failed half-way, before
   * anything was served, so what it applied cannot shadow the same versions replayed.
   */
  clear(): void {
    this.domains = new Map<string, DomainCodes>();
    this.defaultCodes = new DomainCodes();
    this.domains.set(DEFAULT_DOMAIN, this.defaultCodes);
    this.byLinkId.clear();
    this.byDomainId.clear();
    this.count = 0;
    this.newestVersion = 0;
  }

  private place(header: SnapshotEntryHeader, pending: Pending | null): boolean {
    if (header.kind === 'domain') return this.placeDomain(header.linkId, header.version, header.domain);
    const known = this.byLinkId.get(header.linkId);
    if (known && known.version >= header.version) return false;
    // For metrics (snapshot version, last update age). Not on the request path: the
    // clock read is small next to decoding the entry it follows.
    if (header.version > this.newestVersion) this.newestVersion = header.version;
    this.appliedAt = Date.now();
    if (known?.domain != null && known.code !== null) {
      // Only while the slot is still this link's: a hostname deleted and added again is a
      // new domain whose codes start free, and its link of the same code may have arrived
      // before the old link's last entry (instances publish in parallel). A pending entry
      // says whose it is without being parsed (a packed one would decompress its block).
      const codes = this.domains.get(known.domain);
      const held = codes?.get(known.code);
      const owner = held === undefined ? undefined : held instanceof Pending ? held.linkId : held.compiled.id;
      if (owner === header.linkId && codes!.delete(known.code)) this.count--;
    }
    if (pending === null || header.domain === null || header.shortCode === null) {
      this.byLinkId.set(header.linkId, { version: header.version, domain: null, code: null });
      return true;
    }
    const { domain, shortCode } = header;
    const codes = this.codesOf(domain);
    // Counted by the size change: one lookup per entry, not two (a million at a load).
    const before = codes.size;
    codes.set(shortCode, pending);
    this.count += codes.size - before;
    this.byLinkId.set(header.linkId, { version: header.version, domain, code: shortCode });
    return true;
  }

  private placeDomain(domainId: string, version: number, hostname: string | null): boolean {
    const known = this.byDomainId.get(domainId);
    if (known && known.version >= version) return false;
    if (version > this.newestVersion) this.newestVersion = version;
    this.appliedAt = Date.now();
    if (known?.hostname != null) this.domains.get(known.hostname)!.markers--;
    if (hostname !== null) this.codesOf(hostname).markers++;
    this.byDomainId.set(domainId, { version, hostname });
    return true;
  }

  private codesOf(domain: string): DomainCodes {
    let codes = this.domains.get(domain);
    if (!codes) this.domains.set(domain, (codes = new DomainCodes()));
    return codes;
  }

  /**
   * `host`: the Host header's name (request-facts.ts hostName: lowercased, without port
   * or trailing dot), as custom domains are registered.
   */
  find(host: string, shortCode: string): RoutableLink | undefined {
    if (host !== DEFAULT_DOMAIN) {
      const codes = this.domains.get(host);
      if (codes !== undefined && codes.isCustomDomain) {
        const held = codes.get(shortCode);
        return held === undefined ? undefined : routable(codes, shortCode, held);
      }
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
