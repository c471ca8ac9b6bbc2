/**
 * Node 20's `URL.canParse` answers false for valid URLs whose host is written in Latin-1
 * letters (`https://café.com/`, `https://bücher.de/`) once V8 optimises the calling code
 * (after some thousands of calls): its fast path hands the one-byte string to a parser that
 * reads UTF-8. `new URL()` and `URL.parse()` take the ordinary path and are right. A link
 * to such a host was accepted by a fresh API and refused by a warm one, and a warm
 * redirector answered its visitors 500. So URL checks here use `URL.parse`, never
 * `URL.canParse`, and this test holds both.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpUrl } from '../shared/schemas/common.ts';
import { headerSafeUrl } from '../services/redirector/serving/destination-url.ts';
import { referrerHost } from '../services/redirector/serving/request-facts.ts';

const WARM_UP = 30_000;
const repoRoot = join(import.meta.dirname, '..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts|mjs|js)$/.test(entry.name) ? [path] : [];
  });
}

describe('URLs with a Latin-1 host', () => {
  it('stay valid however often they are checked: the API schema, the Location header, the referrer', () => {
    for (let i = 0; i < WARM_UP; i++) {
      httpUrl.safeParse(`https://example.com/${i}`);
      headerSafeUrl(`https://example.com/ ${i}`);
      referrerHost(`https://example.com/${i}`);
    }
    expect(httpUrl.safeParse('https://bücher.de/angebote').success).toBe(true);
    expect(httpUrl.safeParse('https://café.com/menu').success).toBe(true);
    expect(headerSafeUrl('https://café.com/menu')).toBe('https://xn--caf-dma.com/menu');
    expect(headerSafeUrl('https://straße.de/')).toBe('https://xn--strae-oqa.de/');
    expect(referrerHost('https://münchen.de/start')).toBe('xn--mnchen-3ya.de');
    // Still refused: what is not a URL.
    expect(httpUrl.safeParse('https://café com/').success).toBe(false);
    expect(headerSafeUrl('https://[café]/')).toBeNull();
  });

  it('are checked with URL.parse: no source file calls URL.canParse', () => {
    const callers = ['shared', 'services', 'bench', 'scripts', 'tests']
      .flatMap((dir) => sourceFiles(join(repoRoot, dir)))
      .filter((file) => !file.endsWith('url-parsing.test.ts') && readFileSync(file, 'utf8').includes('URL.canParse('))
      .map((file) => relative(repoRoot, file));
    expect(callers).toEqual([]);
  });
});
