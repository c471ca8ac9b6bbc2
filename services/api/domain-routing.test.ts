import { describe, expect, it } from 'vitest';
import { routingRecord } from './domain-routing.ts';

describe('routingRecord: where a custom domain points, from REDIRECT_BASE_URL', () => {
  it('a CNAME to the default redirect host (port and path do not belong in DNS)', () => {
    expect(routingRecord('go.brand.com', 'https://lnk.example.net')).toEqual({ type: 'CNAME', name: 'go.brand.com', value: 'lnk.example.net' });
    expect(routingRecord('go.brand.com', 'http://Short.Example.org:8080/')).toEqual({ type: 'CNAME', name: 'go.brand.com', value: 'short.example.org' });
  });

  it('an A or AAAA record when the default domain is an address, private networks included (self-hosted)', () => {
    expect(routingRecord('go.brand.com', 'http://203.0.113.7')).toEqual({ type: 'A', name: 'go.brand.com', value: '203.0.113.7' });
    expect(routingRecord('go.brand.com', 'http://192.168.1.20:8080')).toEqual({ type: 'A', name: 'go.brand.com', value: '192.168.1.20' });
    expect(routingRecord('go.brand.com', 'http://[2001:db8::5]:8080')).toEqual({ type: 'AAAA', name: 'go.brand.com', value: '2001:db8::5' });
  });

  it('nothing for a default domain only this machine reaches', () => {
    for (const base of ['http://localhost:8080', 'http://app.localhost', 'http://127.0.0.1:8080', 'http://127.1.2.3', 'http://0.0.0.0:8080', 'http://[::1]:8080']) {
      expect(routingRecord('go.brand.com', base), base).toBeNull();
    }
  });
});
