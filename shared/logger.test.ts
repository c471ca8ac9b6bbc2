import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from './logger.ts';

describe('logger', () => {
  afterEach(() => vi.restoreAllMocks());

  const capture = () => {
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    return lines;
  };

  it('writes one JSON object per line with time, level, service and msg, then the fields', () => {
    const lines = capture();
    createLogger('api').info('api listening', { url: 'http://127.0.0.1:3000' });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.endsWith('\n')).toBe(true);
    expect(lines[0]!.slice(0, -1)).not.toContain('\n');
    const entry = JSON.parse(lines[0]!);
    expect(entry).toEqual({ time: expect.any(String), level: 'info', service: 'api', msg: 'api listening', url: 'http://127.0.0.1:3000' });
    expect(new Date(entry.time).toISOString()).toBe(entry.time);
  });

  it('drops lines below its level; silent drops all', () => {
    const lines = capture();
    const warnOnly = createLogger('ingester', 'warn');
    warnOnly.debug('no');
    warnOnly.info('no');
    warnOnly.warn('yes');
    warnOnly.error('yes', { error: 'boom\nsecond line' });
    createLogger('redirector', 'silent').error('no');
    expect(lines.map((l) => JSON.parse(l).level)).toEqual(['warn', 'error']);
    expect(lines[1]!.slice(0, -1)).not.toContain('\n'); // a multi-line error stays one line
  });
});
