import { describe, expect, it } from 'vitest';
import { decodeSnapshotEntryHeader, encodeSnapshotEntry, isUnreadableEntry } from './snapshot-entry.ts';
import { makeLink } from '../routing/fixtures.ts';
import { compileLink } from '../routing/index.ts';

const encode = (s: string) => new TextEncoder().encode(s);

describe('decodeSnapshotEntryHeader', () => {
  it('reads the header encodeSnapshotEntry writes, and where the link starts', () => {
    const link = compileLink(makeLink({ id: 'link_x', shortCode: 'x"y', domain: 'b.example', clicksLimit: 3 }), [], []);
    const data = encodeSnapshotEntry({ version: 5, linkId: 'link_x', link });
    const decoded = decodeSnapshotEntryHeader(data)!;
    expect(decoded.header).toEqual({ version: 5, linkId: 'link_x', domain: 'b.example', shortCode: 'x"y', clicksLimit: 3 });
    expect(JSON.parse(new TextDecoder().decode(data.subarray(decoded.linkStart)))).toEqual(JSON.parse(JSON.stringify(link)));
    const gone = decodeSnapshotEntryHeader(encodeSnapshotEntry({ version: 7, linkId: 'link_gone', link: null }))!;
    expect(gone).toEqual({ header: { version: 7, linkId: 'link_gone', domain: null, shortCode: null, clicksLimit: null }, linkStart: gone.linkStart });
  });

  it('reads in place, inside a larger buffer; the newline must fall inside the range', () => {
    const data = encodeSnapshotEntryFor('abc');
    const decoded = decodeSnapshotEntryHeader(data)!;
    const padded = new Uint8Array(data.length + 6);
    padded.set(data, 3);
    expect(decodeSnapshotEntryHeader(padded, 3, 3 + data.length)).toEqual({ header: decoded.header, linkStart: decoded.linkStart + 3 });
    expect(decodeSnapshotEntryHeader(data, 0, 10)).toBeNull();
  });

  it('is null for the old single-document form, which has no header line', () => {
    expect(decodeSnapshotEntryHeader(encode(JSON.stringify({ version: 1, linkId: 'l', link: null })))).toBeNull();
  });

  it('refuses a header line that is no header, as an unreadable entry', () => {
    for (const line of ['{"version":-1,"linkId":"a","domain":"","shortCode":"x","clicksLimit":null}', '{"version":1.5,"linkId":"a","domain":null,"shortCode":null,"clicksLimit":null}', '{"linkId":"a"}', '[1]', 'not json']) {
      let thrown: unknown;
      try {
        decodeSnapshotEntryHeader(encode(`${line}\n{}`));
      } catch (err) {
        thrown = err;
      }
      expect(isUnreadableEntry(thrown), line).toBe(true);
    }
  });
});

function encodeSnapshotEntryFor(shortCode: string): Uint8Array {
  const link = compileLink(makeLink({ id: 'link_y', shortCode }), [], []);
  return encodeSnapshotEntry({ version: 9, linkId: 'link_y', link });
}
