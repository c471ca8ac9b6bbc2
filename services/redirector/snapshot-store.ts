import { hydrateLink, type CompiledLink, type RoutableLink } from '../../shared/routing/index.ts';
import type { SnapshotEntry } from '../../shared/snapshot/snapshot-entry.ts';
import type { LinkLookup } from './ports.ts';

interface Slot {
  compiled: CompiledLink;
  routable: RoutableLink | null;
}

const DEFAULT_DOMAIN = '';

/**
 * The redirector's in-memory index of links: domain -> short code -> link
 * ('' is the default redirect domain). Entries are hydrated lazily on first
 * request so loading a large snapshot stays cheap in time and memory; an entry
 * older than what we hold is ignored, so updates may arrive twice or out of
 * order (watch restarts, several publishers) safely.
 */
export class SnapshotStore implements LinkLookup {
  private readonly domains = new Map<string, Map<string, Slot>>([[DEFAULT_DOMAIN, new Map()]]);
  private readonly defaultCodes = this.domains.get(DEFAULT_DOMAIN)!;
  private readonly byLinkId = new Map<string, { version: number; domain: string | null; code: string | null }>();
  private readonly clickCounts = new Map<string, number>();
  private loaded = false;
  private count = 0;

  apply(entry: SnapshotEntry): boolean {
    const known = this.byLinkId.get(entry.linkId);
    if (known && known.version >= entry.version) return false;
    if (known?.domain != null && known.code !== null) {
      if (this.domains.get(known.domain)?.delete(known.code)) this.count--;
    }
    if (entry.link === null) {
      this.byLinkId.set(entry.linkId, { version: entry.version, domain: null, code: null });
      return true;
    }
    const { domain, shortCode } = entry.link;
    let codes = this.domains.get(domain);
    if (!codes) this.domains.set(domain, (codes = new Map()));
    if (!codes.has(shortCode)) this.count++;
    codes.set(shortCode, { compiled: entry.link, routable: null });
    this.byLinkId.set(entry.linkId, { version: entry.version, domain, code: shortCode });
    return true;
  }

  /** `host` as the Host header sent it, lowercased; custom domains are registered without a port. */
  find(host: string, shortCode: string): RoutableLink | undefined {
    const slot = (host !== DEFAULT_DOMAIN ? this.domains.get(host)?.get(shortCode) : undefined) ?? this.defaultCodes.get(shortCode);
    if (!slot) return undefined;
    return (slot.routable ??= hydrateLink(slot.compiled));
  }

  /** The link a (verified) click id names, wherever it is served. */
  findById(linkId: string): RoutableLink | undefined {
    const known = this.byLinkId.get(linkId);
    if (!known || known.domain === null || known.code === null) return undefined;
    const slot = this.domains.get(known.domain)?.get(known.code);
    return slot ? (slot.routable ??= hydrateLink(slot.compiled)) : undefined;
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
    return this.domains.get(known.domain)?.get(known.code)?.compiled.clicksLimit ?? null;
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
}
