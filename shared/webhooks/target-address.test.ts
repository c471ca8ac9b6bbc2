import { describe, expect, it } from 'vitest';
import { blockedAddressReason, blockedUrlReason } from './target-address.ts';

describe('blockedAddressReason', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    // IPv4 inside IPv6, in every spelling: mapped, translated, NAT64, 6to4 (compressed too).
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:0:7f00:1', 'loopback'],
    ['::ffff:0:127.0.0.1', 'loopback'],
    ['64:ff9b::a9fe:a9fe', 'link-local or metadata'],
    ['64:ff9b::1', 'unspecified'],
    ['64:ff9b::169.254.169.254', 'link-local or metadata'],
    ['2002:7f00::1', 'loopback'],
    ['2002:c0a8::1', 'private'],
    ['2002:c0a8:0101::', 'private'],
    ['2002:a9fe:a9fe::', 'link-local or metadata'],
    ['2002:7f00:0:0:0:0:0:1', 'loopback'],
    ['2001:0::1', 'Teredo'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
    ['fe80::1%eth0', 'link-local'],
  ])('%s is refused: %s', (address, reason) => {
    expect(blockedAddressReason(address)).toBe(reason);
  });

  it.each(['93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946', '::ffff:93.184.216.34', '2002:5db8:d822::1', '64:ff9b::5db8:d822'])('%s passes', (address) => {
    expect(blockedAddressReason(address)).toBeNull();
  });

  it('reads the host of a URL, brackets and all', () => {
    expect(blockedUrlReason('http://[2002:7f00::1]/hook')).toBe('loopback');
    expect(blockedUrlReason('http://[::ffff:0:7f00:1]/')).toBe('loopback');
    expect(blockedUrlReason('https://example.com/hook')).toBeNull();
  });
});
