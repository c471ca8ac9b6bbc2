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
    expect(parse('event=SIGNUP&value=0&currency=usd&orderId=%20o-1%20')).toEqual({ clickId, linkId, event: 'signup', value: 0, currency: 'USD', orderId: 'o-1' });
    expect(parse('value=19.99')?.value).toBe(19.99);
    expect(parse('value=0.0001')?.value).toBe(0.0001);
    // More than 4 decimal places (ClickHouse keeps 4) is malformed, like any other non-plain decimal.
    for (const value of ['-1', '1e5', 'NaN', 'Infinity', '12,50', '1.1234567', '0.000099', '10.00009', '']) {
      expect(parse(`value=${value}`), value).toMatchObject({ value: null, dropped: ['value'] });
    }
    expect(parse('order_id=snake')?.orderId).toBe('snake');
    for (const orderId of ['x'.repeat(129), 'a%0Ab', 'caf%C3%A9', '%20%20']) {
      expect(parse(`orderId=${orderId}`), orderId).toMatchObject({ orderId: null, dropped: ['orderId'] });
    }
  });

  it('judges currency, event and order id as POST /conversions/s2s does', () => {
    const parse = (extra: string) => parsePixelConversion(secret, `clickId=${clickId}&${extra}`);
    // A value in a currency that is not ISO 4217 is never booked as USD: counted, with value 0.
    for (const currency of ['EURO', 'XYZ', 'E1R', '']) {
      expect(parse(`event=purchase&value=49.95&currency=${currency}`), currency).toEqual({
        clickId, linkId, event: 'purchase', value: null, currency: null, orderId: null, dropped: ['currency'],
      });
    }
    expect(parse('currency=eur&value=5')).toMatchObject({ currency: 'EUR', value: 5 });
    // Event names in any case, stored lowercase; an unknown one is refused, never a revenue-bearing `conversion`.
    expect(parse('event=Purchase&value=5')).toMatchObject({ event: 'purchase', value: 5 });
    expect(parse('event=LEAD')).toMatchObject({ event: 'lead' });
    for (const event of ['refund', 'purchased', '']) expect(parse(`event=${event}&value=5`), event).toEqual({ refused: 'unknown_event', linkId });
    // Surrounding spaces trimmed, as s2s trims them: " SP-1" and "SP-1" are one order.
    expect(parse('orderId=%20SP-1')).toMatchObject({ orderId: 'SP-1' });
  });

  it('refuses a conversion whose value is above the cap (the pixel still answers), up to the cap inclusive', () => {
    const parse = (value: string) => parsePixelConversion(secret, `clickId=${clickId}&event=purchase&value=${value}`);
    expect(parse('1000000')).toMatchObject({ value: 1_000_000 });
    expect(parse('999999.9999')).toMatchObject({ value: 999_999.9999 });
    for (const value of ['1000000.01', '1000000.0001', '1000001', '800000000000', '99999999999999', '00000000000001000001', `1${'0'.repeat(400)}`]) {
      expect(parse(value), value).toEqual({ refused: 'value_too_large', linkId });
    }
    expect(parseWithCap(secret, `clickId=${clickId}&value=50`, 10)).toEqual({ refused: 'value_too_large', linkId });
    // A forged click id is no conversion at all, whatever its value.
    expect(parseWithCap(randomBytes(32), `clickId=${clickId}&value=1e20`, CAP)).toBeNull();
  });
});
