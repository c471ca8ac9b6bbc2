import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createClickId } from '../../../shared/click-id.ts';
import { newId } from '../../../shared/ids.ts';
import { parsePixelConversion } from './pixel.ts';

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
    const parse = (extra: string) => parsePixelConversion(secret, `clickId=${clickId}&${extra}`);
    expect(parse('event=SIGNUP&value=0&currency=usd&orderId=%20o-1%20')).toMatchObject({ event: 'signup', value: 0, currency: 'USD', orderId: 'o-1' });
    expect(parse('value=19.99')?.value).toBe(19.99);
    for (const value of ['-1', '1e5', 'NaN', 'Infinity', '12,50', '99999999999999', '1.1234567', '']) expect(parse(`value=${value}`)?.value, value).toBeNull();
    expect(parse('currency=EURO')?.currency).toBeNull();
    expect(parse('event=refund')?.event).toBe('conversion');
    expect(parse(`orderId=${'x'.repeat(129)}`)?.orderId).toBeNull();
    expect(parse('orderId=a%0Ab')?.orderId).toBeNull();
    expect(parse('order_id=snake')?.orderId).toBe('snake');
  });
});
