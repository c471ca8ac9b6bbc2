import { describe, expect, it } from 'vitest';
import { parseEntryHeaderFast } from './entry-header-parser.ts';
import { decodeSnapshotEntryHeader, encodeSnapshotEntry } from './snapshot-entry.ts';
import { makeLink } from '../routing/fixtures.ts';
import { compileLink } from '../routing/index.ts';

const encode = (s: string) => new TextEncoder().encode(s);
/** The header line, a newline and a link, inside other bytes: parsed where it is. */
const fast = (line: string) => {
  const bytes = encode(`xx${line}\n{"v":1}yy`);
  const parsed = parseEntryHeaderFast(bytes, 2, bytes.length - 2);
  if (parsed) expect(new TextDecoder().decode(bytes.subarray(parsed.linkStart, bytes.length - 2))).toBe('{"v":1}');
  return parsed?.header ?? null;
};

describe('parseEntryHeaderFast', () => {
  it('reads what encodeSnapshotEntry writes, as JSON.parse would', () => {
    const headers = [
      { version: 1, linkId: 'link_a', domain: '', shortCode: 'abc', clicksLimit: null },
      { version: 987_654_321_012, linkId: 'link_0123456789abcdefghijkl', domain: 'go.brand.example', shortCode: 'Summer-Sale_2026', clicksLimit: 25 },
      { version: 7, linkId: 'link_gone', domain: null, shortCode: null, clicksLimit: null },
      { version: 0, linkId: '', domain: '', shortCode: '', clicksLimit: 0 },
    ];
    for (const header of headers) expect(fast(JSON.stringify(header))).toEqual(header);
  });

  it('declines anything it does not fully understand (the caller then uses JSON.parse)', () => {
    const declined = [
      '{"version":1,"linkId":"a\\"b","domain":"","shortCode":"x","clicksLimit":null}', // escape
      '{"version":1,"linkId":"é","domain":"","shortCode":"x","clicksLimit":null}', // non-ASCII
      '{"version":1.5,"linkId":"a","domain":"","shortCode":"x","clicksLimit":null}', // not an integer
      '{"version":-1,"linkId":"a","domain":"","shortCode":"x","clicksLimit":null}',
      '{"version":01,"linkId":"a","domain":"","shortCode":"x","clicksLimit":null}',
      '{"version":1234567890123456,"linkId":"a","domain":"","shortCode":"x","clicksLimit":null}', // past exact doubles' comfort
      '{"linkId":"a","version":1,"domain":"","shortCode":"x","clicksLimit":null}', // key order
      '{"version": 1,"linkId":"a","domain":"","shortCode":"x","clicksLimit":null}', // whitespace
      '{"version":1,"linkId":"a","domain":"","shortCode":"x","clicksLimit":null,"extra":1}',
      '{"version":1,"linkId":"a","domain":"","shortCode":"x","clicksLimit":null}x', // no newline after it
      '{"version":1,"linkId":"a","domain":"","shortCode":"x","clicksLimit":',
      '{"version":1,"linkId":"a',
    ];
    for (const line of declined) expect(fast(line), line).toBeNull();
  });

  it('decodeSnapshotEntryHeader gives the same header either way, and where the link starts', () => {
    const link = compileLink(makeLink({ id: 'link_x', shortCode: 'x"y', domain: 'b.example', clicksLimit: 3 }), [], []);
    const data = encodeSnapshotEntry({ version: 5, linkId: 'link_x', link });
    const decoded = decodeSnapshotEntryHeader(data)!;
    expect(decoded.header).toEqual({ version: 5, linkId: 'link_x', domain: 'b.example', shortCode: 'x"y', clicksLimit: 3 });
    expect(JSON.parse(new TextDecoder().decode(data.subarray(decoded.linkStart)))).toEqual(JSON.parse(JSON.stringify(link)));
    expect(decodeSnapshotEntryHeader(encode(JSON.stringify({ version: 1, linkId: 'l', link: null })))).toBeNull();
    // In place, inside a larger buffer; the newline must fall inside the range.
    const padded = new Uint8Array(data.length + 6);
    padded.set(data, 3);
    expect(decodeSnapshotEntryHeader(padded, 3, 3 + data.length)).toEqual({ header: decoded.header, linkStart: decoded.linkStart + 3 });
    expect(decodeSnapshotEntryHeader(data, 0, 10)).toBeNull();
  });
});
