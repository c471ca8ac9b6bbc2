import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createClickId } from '../../../shared/click-id.ts';
import { newId } from '../../../shared/ids.ts';
import { parsePixelConversion as parseWithCap, type PixelConversion } from './pixel.ts';

const CAP = 1_000_000;
const parsePixelConversion = (key: Buffer, query: string) => parseWithCap(key, query, CAP);

const secret = randomBytes(32);
const linkId = newId('link');
const clickId = createClickId(secret, linkId, Date.now());

describe('parsePixelConversion', () => {
  it('needs a verified click id', () => {
    expect(parsePixelConversion(secret, '')).toBeNull();
    expect(parsePixelConversion(secret, 'event=purchase')).toBeNull();
    expect(parsePixelConversion(randomBytes(32), `clickId=${clickId}`)).toBeNull();
    expect(parsePixelConversion(secret, `clickId=${clickId}`)).toEqual({ clickId, linkId, event: 'conversion', value: null, currency: null, orderId: null });
  });

  it('keeps valid fields and drops invalid ones', () => {
    const parse = (extra: string) => parsePixelConversion(secret, `clickId=${clickId}&${extra}`) as PixelConversion | null;
    expect(parse('event=SIGNUP&value=0&currency=usd&orderId=%20o-1%20')).toMatchObject({ event: 'signup', value: 0, currency: 'USD', orderId: 'o-1' });
    expect(parse('value=19.99')?.value).toBe(19.99);
    for (const value of ['-1', '1e5', 'NaN', 'Infinity', '12,50', '1.1234567', '']) expect(parse(`value=${value}`), value).toMatchObject({ value: null });
    expect(parse('currency=EURO')?.currency).toBeNull();
    expect(parse('event=refund')?.event).toBe('conversion');
    expect(parse(`orderId=${'x'.repeat(129)}`)?.orderId).toBeNull();
    expect(parse('orderId=a%0Ab')?.orderId).toBeNull();
    expect(parse('order_id=snake')?.orderId).toBe('snake');
  });

  it('refuses a conversion whose value is above the cap (the pixel still answers), up to the cap inclusive', () => {
    const parse = (value: string) => parsePixelConversion(secret, `clickId=${clickId}&event=purchase&value=${value}`);
    expect(parse('1000000')).toMatchObject({ value: 1_000_000 });
    expect(parse('999999.999999')).toMatchObject({ value: 999_999.999999 });
    for (const value of ['1000000.01', '1000001', '800000000000', '99999999999999', '00000000000001000001', `1${'0'.repeat(400)}`]) {
      expect(parse(value), value).toEqual({ refused: 'value_too_large', linkId });
    }
    expect(parseWithCap(secret, `clickId=${clickId}&value=50`, 10)).toEqual({ refused: 'value_too_large', linkId });
    // A forged click id is no conversion at all, whatever its value.
    expect(parseWithCap(randomBytes(32), `clickId=${clickId}&value=1e20`, CAP)).toBeNull();
  });
});
