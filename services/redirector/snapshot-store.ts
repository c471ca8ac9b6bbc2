import { hydrateLink, type CompiledLink, type RoutableLink } from '../../shared/routing/index.ts';
import type { SnapshotEntry } from '../../shared/snapshot/snapshot-entry.ts';
import type { LinkLookup } from './ports.ts';


const keyOf = (domain: string, shortCode: string) => `${domain}\n${shortCode}`;

/**
 * The redirector's in-memory index of links by (domain, short code). Entries are
 * hydrated lazily on first request so loading a large snapshot stays cheap in
 * time and memory; an entry older than what we hold is ignored, so updates may
 * arrive twice or out of order (watch restarts, several publishers) safely.
 */
export class SnapshotStore implements LinkLookup {
  private readonly byKey = new Map<string, { compiled: CompiledLink; routable: RoutableLink | null }>();
  private readonly byLinkId = new Map<string, { version: number; key: string | null }>();
  private readonly customDomains = new Set<string>();
  private readonly clickCounts = new Map<string, number>();

  apply(entry: SnapshotEntry): boolean {
    const known = this.byLinkId.get(entry.linkId);
    if (known && known.version >= entry.version) return false;
    if (known?.key) this.byKey.delete(known.key);
    if (entry.link === null) {
      this.byLinkId.set(entry.linkId, { version: entry.version, key: null });
      return true;
    }
    const key = keyOf(entry.link.domain, entry.link.shortCode);
    this.byKey.set(key, { compiled: entry.link, routable: null });
    this.byLinkId.set(entry.linkId, { version: entry.version, key });
    if (entry.link.domain !== '') this.customDomains.add(entry.link.domain);
    return true;
  }

  find(host: string, shortCode: string): RoutableLink | undefined {
    const domain = host.toLowerCase();
    const slot = (this.customDomains.has(domain) ? this.byKey.get(keyOf(domain, shortCode)) : undefined) ?? this.byKey.get(keyOf('', shortCode));
    if (!slot) return undefined;
    return (slot.routable ??= hydrateLink(slot.compiled));
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
    const key = this.byLinkId.get(linkId)?.key;
    return key ? (this.byKey.get(key)?.compiled.clicksLimit ?? null) : null;
  }

  version(linkId: string): number {
    return this.byLinkId.get(linkId)?.version ?? 0;
  }

  get size(): number {
    return this.byKey.size;
  }
}
