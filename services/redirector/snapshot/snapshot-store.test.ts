import { describe, expect, it } from 'vitest';
import { makeLink } from '../../../shared/routing/fixtures.ts';
import { compileLink, type CompiledLink } from '../../../shared/routing/index.ts';
import { SnapshotStore } from './snapshot-store.ts';
import { decodeSnapshotEntry, decodeSnapshotEntryHeader, decodeSnapshotEntryLazily, encodeDomainEntry, encodeSnapshotEntry } from '../../../shared/snapshot/snapshot-entry.ts';
import { compressBlock, decompressBlock, SnapshotBlockBuilder } from '../../../shared/snapshot/snapshot-blocks.ts';
import { SnapshotFrameReader } from '../../../shared/snapshot/snapshot-blob.ts';

function compiled(id: string, shortCode: string, domain = '', overrides: Parameters<typeof makeLink>[0] = {}): CompiledLink {
  return compileLink(makeLink({ id, shortCode, domain, ...overrides }), [], []);
}

describe('SnapshotStore', () => {
  it('finds links by short code on the default domain, for any Host', () => {
    const store = new SnapshotStore();
    store.apply({ version: 1, linkId: 'link_a', link: compiled('link_a', 'abc') });
    expect(store.find('', 'abc')?.compiled.id).toBe('link_a');
    expect(store.find('lnk.example:8080', 'abc')?.compiled.id).toBe('link_a');
    expect(store.find('', 'abd')).toBeUndefined();
    expect(store.find('', 'ABC')).toBeUndefined();
    expect(store.size).toBe(1);
  });

  it('serves on a custom domain only the links of that domain; other hosts get the default domain', () => {
    const store = new SnapshotStore();
    store.apply({ version: 1, linkId: 'link_d', link: compiled('link_d', 'x', '') });
    store.apply({ version: 2, linkId: 'link_c', link: compiled('link_c', 'x', 'go.brand.example') });
    store.apply({ version: 3, linkId: 'link_o', link: compiled('link_o', 'only-default', '') });
    expect(store.find('go.brand.example', 'x')?.compiled.id).toBe('link_c');
    expect(store.find('other.example', 'x')?.compiled.id).toBe('link_d');
    expect(store.find('other.example', 'only-default')?.compiled.id).toBe('link_o');
    // Another workspace's default-domain link never answers on a custom domain.
    expect(store.find('go.brand.example', 'only-default')).toBeUndefined();
    expect(store.findById('link_c')?.compiled.id).toBe('link_c');
    expect(store.size).toBe(3);
  });

  it('knows a verified custom domain from its marker, before it holds any link, until the marker says it is gone', () => {
    const store = new SnapshotStore();
    store.apply({ version: 1, linkId: 'link_d', link: compiled('link_d', 'login', '') });
    expect(store.find('new.brand.example', 'login')?.compiled.id).toBe('link_d');
    expect(store.applyDomain({ version: 2, domainId: 'domain_a', hostname: 'new.brand.example' })).toBe(true);
    expect(store.find('new.brand.example', 'login')).toBeUndefined();
    expect(store.find('', 'login')?.compiled.id).toBe('link_d');
    // Markers count as no link, and older ones are ignored.
    expect(store.size).toBe(1);
    expect(store.applyDomain({ version: 1, domainId: 'domain_a', hostname: null })).toBe(false);
    expect(store.find('new.brand.example', 'login')).toBeUndefined();
    // Another workspace verifies the hostname after the first let it go: whatever order the two markers arrive in.
    store.applyDomain({ version: 5, domainId: 'domain_b', hostname: 'new.brand.example' });
    store.applyDomain({ version: 4, domainId: 'domain_a', hostname: null });
    expect(store.find('new.brand.example', 'login')).toBeUndefined();
    store.applyDomain({ version: 6, domainId: 'domain_b', hostname: null });
    expect(store.find('new.brand.example', 'login')?.compiled.id).toBe('link_d');
  });

  it("a deleted or failed domain's tombstone keeps its codes from the default domain's links; a new domain of the hostname serves its own", () => {
    const store = new SnapshotStore();
    store.apply({ version: 1, linkId: 'link_phish', link: compiled('link_phish', 'promo', '') });
    store.applyDomain({ version: 2, domainId: 'domain_a', hostname: 'go.brand.example' });
    store.apply({ version: 3, linkId: 'link_a', link: compiled('link_a', 'promo', 'go.brand.example') });
    expect(store.find('go.brand.example', 'promo')?.compiled.id).toBe('link_a');
    // Deleted (or failed): its link goes, its marker stays, as a tombstone, in either order.
    store.apply({ version: 5, linkId: 'link_a', link: null });
    store.applyDomain({ version: 4, domainId: 'domain_a', hostname: 'go.brand.example' });
    expect(store.find('go.brand.example', 'promo')).toBeUndefined();
    expect(store.find('GO.other.example', 'promo')?.compiled.id).toBe('link_phish');
    // A redirector loading the bucket afresh decides alike.
    const late = new SnapshotStore();
    late.apply({ version: 1, linkId: 'link_phish', link: compiled('link_phish', 'promo', '') });
    late.apply({ version: 5, linkId: 'link_a', link: null });
    late.applyDomain({ version: 4, domainId: 'domain_a', hostname: 'go.brand.example' });
    expect(late.find('go.brand.example', 'promo')).toBeUndefined();
    // The hostname verified again, by another workspace: its links answer; the tombstone still counts once they go.
    store.applyDomain({ version: 6, domainId: 'domain_b', hostname: 'go.brand.example' });
    store.apply({ version: 7, linkId: 'link_b', link: compiled('link_b', 'promo', 'go.brand.example') });
    expect(store.find('go.brand.example', 'promo')?.compiled.id).toBe('link_b');
    store.apply({ version: 8, linkId: 'link_b', link: null });
    store.applyDomain({ version: 9, domainId: 'domain_b', hostname: null });
    expect(store.find('go.brand.example', 'promo')).toBeUndefined();
  });

  it('a custom domain known only by its links (no marker yet) stops being one when its last link goes', () => {
    const store = new SnapshotStore();
    store.apply({ version: 1, linkId: 'link_d', link: compiled('link_d', 'login', '') });
    store.apply({ version: 2, linkId: 'link_c', link: compiled('link_c', 'promo', 'go.brand.example') });
    expect(store.find('go.brand.example', 'login')).toBeUndefined();
    store.apply({ version: 3, linkId: 'link_c', link: null });
    // What every redirector holds decides, not what one has seen since it started.
    expect(store.find('go.brand.example', 'login')?.compiled.id).toBe('link_d');
  });

  it('a hostname added again: the old domain\'s link going, after the new one took its code, leaves the new one served', () => {
    const store = new SnapshotStore();
    store.apply({ version: 1, linkId: 'link_old', link: compiled('link_old', 'sale', 'go.brand.example') });
    store.apply({ version: 3, linkId: 'link_new', link: compiled('link_new', 'sale', 'go.brand.example') });
    // The old link's last entry (its domain deleted) arrives after the new link's.
    store.apply({ version: 2, linkId: 'link_old', link: null });
    expect(store.find('go.brand.example', 'sale')?.compiled.id).toBe('link_new');
    expect(store.size).toBe(1);
    store.apply({ version: 4, linkId: 'link_new', link: null });
    expect(store.find('go.brand.example', 'sale')).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('reads domain markers off the wire, packed or not, and clear() forgets them', () => {
    const store = new SnapshotStore();
    store.apply({ version: 1, linkId: 'link_d', link: compiled('link_d', 'login', '') });
    const wire = encodeDomainEntry({ version: 2, domainId: 'domain_w', hostname: 'wire.brand.example' });
    const lazy = decodeSnapshotEntryLazily(wire);
    expect(lazy).toEqual({ header: { version: 2, linkId: 'domain_w', domain: 'wire.brand.example', shortCode: null, clicksLimit: null, kind: 'domain' }, linkJson: '' });
    expect(store.applyLazy(lazy)).toBe(true);
    expect(store.find('wire.brand.example', 'login')).toBeUndefined();
    expect(store.applyPacked(decodeSnapshotEntryHeader(encodeDomainEntry({ version: 3, domainId: 'domain_w', hostname: null }))!.header, new Uint8Array(0), 0, 0)).toBe(true);
    expect(store.find('wire.brand.example', 'login')?.compiled.id).toBe('link_d');
    store.applyDomain({ version: 4, domainId: 'domain_w', hostname: 'wire.brand.example' });
    store.clear();
    store.apply({ version: 1, linkId: 'link_d', link: compiled('link_d', 'login', '') });
    expect(store.find('wire.brand.example', 'login')?.compiled.id).toBe('link_d');
    expect(store.applyDomain({ version: 4, domainId: 'domain_w', hostname: 'wire.brand.example' })).toBe(true);
  });

  it('hydrates once and serves the same RoutableLink until the link changes', () => {
    const store = new SnapshotStore();
    store.apply({ version: 1, linkId: 'link_a', link: compiled('link_a', 'abc') });
    const first = store.find('', 'abc');
    expect(store.find('', 'abc')).toBe(first);
    expect(store.findById('link_a')).toBe(first);
    store.apply({ version: 2, linkId: 'link_a', link: compiled('link_a', 'abc', '', { defaultDestination: 'https://example.com/new' }) });
    const second = store.find('', 'abc');
    expect(second).not.toBe(first);
    expect(second?.compiled.defaultDestination).toBe('https://example.com/new');
  });

  it('moves a link when its short code or domain changes, and removes deleted links', () => {
    const store = new SnapshotStore();
    store.apply({ version: 1, linkId: 'link_a', link: compiled('link_a', 'old') });
    store.apply({ version: 2, linkId: 'link_a', link: compiled('link_a', 'new', 'go.brand.example') });
    expect(store.find('', 'old')).toBeUndefined();
    expect(store.find('go.brand.example', 'new')?.compiled.id).toBe('link_a');
    expect(store.size).toBe(1);
    store.apply({ version: 3, linkId: 'link_a', link: null });
    expect(store.find('go.brand.example', 'new')).toBeUndefined();
    expect(store.findById('link_a')).toBeUndefined();
    expect(store.size).toBe(0);
    expect(store.version('link_a')).toBe(3);
  });

  it('ignores entries older than or as old as what it holds', () => {
    const store = new SnapshotStore();
    expect(store.apply({ version: 5, linkId: 'link_a', link: compiled('link_a', 'five') })).toBe(true);
    expect(store.apply({ version: 4, linkId: 'link_a', link: compiled('link_a', 'four') })).toBe(false);
    expect(store.apply({ version: 5, linkId: 'link_a', link: null })).toBe(false);
    expect(store.find('', 'five')?.compiled.id).toBe('link_a');
    expect(store.find('', 'four')).toBeUndefined();
  });

  it('keeps clicks and clicksLimit per link', () => {
    const store = new SnapshotStore();
    store.apply({ version: 1, linkId: 'link_a', link: compiled('link_a', 'a', '', { clicksLimit: 10 }) });
    expect(store.clicks('link_a')).toBe(0);
    store.setClicks('link_a', 7);
    expect(store.clicks('link_a')).toBe(7);
    expect(store.clicksLimit('link_a')).toBe(10);
    expect(store.clicksLimit('link_unknown')).toBeNull();
  });

  it('holds 100k links and finds each, also after half are deleted', () => {
    const store = new SnapshotStore();
    for (let i = 0; i < 100_000; i++) store.apply({ version: 1, linkId: `link_${i}`, link: compiled(`link_${i}`, `c${i.toString(36)}`) });
    for (let i = 0; i < 100_000; i += 2) store.apply({ version: 2, linkId: `link_${i}`, link: null });
    for (let i = 0; i < 100_000; i += 997) expect(store.find('', `c${i.toString(36)}`)?.compiled.id).toBe(i % 2 === 0 ? undefined : `link_${i}`);
    expect(store.size).toBe(50_000);
  });
  it('serves entries off the wire the same as parsed ones, parsing a link only when it is first served', () => {
    const link = compiled('link_w', 'wire', 'go.brand.example', { clicksLimit: 7 });
    const wire = encodeSnapshotEntry({ version: 3, linkId: 'link_w', link });
    expect(decodeSnapshotEntry(wire)).toEqual({ version: 3, linkId: 'link_w', link });
    const lazy = decodeSnapshotEntryLazily(wire);
    expect(lazy.header).toEqual({ version: 3, linkId: 'link_w', domain: 'go.brand.example', shortCode: 'wire', clicksLimit: 7 });
    const store = new SnapshotStore();
    expect(store.applyLazy(lazy)).toBe(true);
    expect(store.clicksLimit('link_w')).toBe(7);
    expect(store.find('go.brand.example', 'wire')?.compiled).toEqual(link);
    expect(store.findById('link_w')?.clicksLimit).toBe(7);
    // Older versions are ignored, a null link removes it.
    expect(store.applyLazy(decodeSnapshotEntryLazily(encodeSnapshotEntry({ version: 2, linkId: 'link_w', link: null })))).toBe(false);
    const gone = decodeSnapshotEntryLazily(encodeSnapshotEntry({ version: 4, linkId: 'link_w', link: null }));
    expect(gone).toEqual({ header: { version: 4, linkId: 'link_w', domain: null, shortCode: null, clicksLimit: null }, linkJson: '' });
    expect(store.applyLazy(gone)).toBe(true);
    expect(store.find('go.brand.example', 'wire')).toBeUndefined();
    expect(store.size).toBe(0);
  });

  it('reads entries written as one JSON document (before the header line) and refuses anything else', () => {
    const link = compiled('link_old', 'old');
    const legacy = new TextEncoder().encode(JSON.stringify({ version: 5, linkId: 'link_old', link }));
    expect(decodeSnapshotEntry(legacy)).toEqual({ version: 5, linkId: 'link_old', link });
    expect(() => decodeSnapshotEntryLazily(new TextEncoder().encode('{"version":1}'))).toThrow(/not a snapshot entry/);
    expect(() => decodeSnapshotEntryLazily(new TextEncoder().encode('garbage'))).toThrow();
  });

  it('serves links of a compressed block (the compacted snapshot) as the same links, decompressing on first use', async () => {
    const links = Array.from({ length: 300 }, (_, i) => compiled(`link_p${i}`, `p${i}`, i % 3 === 0 ? 'go.brand.example' : '', { clicksLimit: i % 5 === 0 ? i + 1 : null }));
    const builder = new SnapshotBlockBuilder();
    const blocks: Uint8Array[] = [];
    const pack = async (frames: Uint8Array | null) => frames && blocks.push(await compressBlock(frames));
    for (const link of links) await pack(builder.add(encodeSnapshotEntry({ version: 10, linkId: link.id, link })));
    await pack(builder.finish());
    expect(blocks.length).toBeGreaterThan(1); // 300 links do not fit one block

    const store = new SnapshotStore();
    for (const block of blocks) {
      const plain = decompressBlock(block);
      new SnapshotFrameReader().push(plain, (frame) => {
        const { header, linkStart } = decodeSnapshotEntryHeader(frame)!;
        const at = frame.byteOffset - plain.byteOffset;
        expect(store.applyPacked(header, block, at + linkStart, at + frame.length)).toBe(true);
      });
    }
    expect(store.size).toBe(300);
    expect(store.clicksLimit('link_p5')).toBe(6);
    for (const [i, link] of links.entries()) {
      expect(store.find(link.domain === '' ? 'any.example' : link.domain, `p${i}`)?.compiled).toEqual(JSON.parse(JSON.stringify(link)));
    }
    expect(store.findById('link_p7')?.compiled.id).toBe('link_p7');
    // Newer entries from the watch replace packed ones; older ones do not.
    expect(store.apply({ version: 9, linkId: 'link_p1', link: compiled('link_p1', 'p1', '', { defaultDestination: 'https://example.com/older' }) })).toBe(false);
    expect(store.applyLazy(decodeSnapshotEntryLazily(encodeSnapshotEntry({ version: 11, linkId: 'link_p2', link: null })))).toBe(true);
    expect(store.find('', 'p2')).toBeUndefined();
    expect(store.size).toBe(299);
    // A load that failed half-way is forgotten whole; entries apply again from scratch.
    store.setClicks('link_p3', 2);
    store.clear();
    expect([store.size, store.find('', 'p3'), store.findById('link_p3'), store.version('link_p3'), store.clicks('link_p3')]).toEqual([0, undefined, undefined, 0, 2]);
    expect(store.apply({ version: 1, linkId: 'link_p3', link: compiled('link_p3', 'p3') })).toBe(true);
    expect(store.find('', 'p3')?.compiled.id).toBe('link_p3');
  });
});
