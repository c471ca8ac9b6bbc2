import { describe, expect, it } from 'vitest';
import { clickEventFields, clickEventSchema } from '../schemas/click-event.ts';
import { sampleClickEvent } from './click-event-fixture.ts';

describe('sampleClickEvent', () => {
  it('is a valid click event with every declared key in declaration order, given fields included', () => {
    const event = sampleClickEvent({ utmSource: 'news', id: 'ck_given', bot: true });
    expect(Object.keys(event)).toEqual(Object.keys(clickEventFields));
    expect(clickEventSchema.parse(event)).toEqual(event);
    expect(event).toMatchObject({ utmSource: 'news', id: 'ck_given', bot: true, country: null, kind: 'click' });
    expect(clickEventSchema.parse(sampleClickEvent())).toEqual(sampleClickEvent());
  });
});
