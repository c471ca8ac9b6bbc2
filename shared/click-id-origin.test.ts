import { describe, expect, it } from 'vitest';
import { createClickId } from './click-id.ts';
import { clickIdOrigin } from './click-id-origin.ts';

const secret = Buffer.from('a-deployment-secret-of-32-or-more-chars');
const linkId = 'link_0123456789abcdefghijkl';
const otherLink = 'link_zyxwvutsrqponmlkjihgfe';

describe('clickIdOrigin', () => {
  const genuine = clickIdOrigin(secret);
  const at = 1_767_225_600_123;
  const id = createClickId(secret, linkId, at);

  it('passes a click id issued for this link at this time', () => {
    expect(genuine(id, linkId, at)).toBe(true);
  });

  it('refuses ids of another secret, tampered ids, and real ids on another link or time', () => {
    expect(genuine(createClickId(Buffer.from('another-secret-that-is-32-characters!'), linkId, at), linkId, at)).toBe(false);
    const last = id.at(-2) === 'A' ? 'B' : 'A';
    expect(genuine(`${id.slice(0, -2)}${last}${id.at(-1)}`, linkId, at)).toBe(false);
    expect(genuine(id, otherLink, at)).toBe(false);
    expect(genuine(id, linkId, at + 1)).toBe(false);
    for (const junk of ['ck_', 'ck_forged', `ck_${'A'.repeat(63)}`, '', 'link_x']) expect(genuine(junk, linkId, at), junk).toBe(false);
  });
});
