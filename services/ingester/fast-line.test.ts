import { describe, expect, it } from 'vitest';
import { clickEventSchema, type ClickEvent } from '../../shared/schemas/click-event.ts';
import { mulberry32 } from '../../shared/testing/seeded-random.ts';
import { EventBatch } from './event-batch.ts';
import { clickEvents } from './event-tables.ts';
import { readMessage } from './read-message.ts';

/**
 * The fast line path must be the zod path, only faster: whenever it takes a line,
 * JSON.parse and the schema take it too and the bytes it writes are the zod
 * path's to the byte. Checked on generated events, in the redirector's form and
 * others, and on random mutations of them.
 */
const fastLine = clickEvents.fastLine!;

function random(seed: number) {
  const next = mulberry32(seed);
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)]!;
  return { next, int, pick };
}

type Random = ReturnType<typeof random>;

const plain = 'abcXYZ019 -_.:/?=&%~!#$()*+,;@[]^`{|}';
const awkward = ['"', '\\', '\t', '\n', '\u0001', '\u007f', 'é', 'ü', '😀', '\ud800', '\u2028', '\ufeff'];

function text(r: Random, length = r.int(4) === 0 ? r.int(300) : r.int(24)): string {
  let out = '';
  for (let i = 0; i < length; i++) out += r.int(25) === 0 ? r.pick(awkward) : plain[r.int(plain.length)];
  return out;
}

/**
 * Mostly valid events (about half with only plain text, a quarter with text beyond
 * ASCII but nothing escaped outside ids), now and then a field of the wrong shape;
 * `valid`: only valid events with plain text.
 */
function event(r: Random, valid = false): Record<string, unknown> {
  const mode = valid || r.next() < 0.5 ? 'plain' : r.next() < 0.5 ? 'beyond ascii' : 'any';
  const plainText = () => text(r).replace(/[^\x20-\x7e]|["\\]/g, 'x');
  const str = () => (mode === 'plain' ? plainText() : mode === 'beyond ascii' ? text(r).replace(/["\\\u0000-\u001f\u007f\ud800]/g, 'é') : text(r));
  const idText = () => (mode === 'any' ? text(r) : plainText());
  const maybe = () => (r.int(3) === 0 ? null : str());
  const odd = () => !valid && r.int(40) === 0;
  const e: Record<string, unknown> = {
    id: odd() ? str() : `ck_${idText()}`,
    kind: odd() ? str() : r.pick(['click', 'impression']),
    // Times DateTime64(3) holds (1970 to 2299), and now and then safe integers past them (-1, 2300-01-01, ...).
    ts: odd() ? r.pick([1.5, 2 ** 53, -(2 ** 53), 2 ** 53 + 2, 1e21, '1']) : r.pick([0, -0, 1, 1_700_000_000_123, 10_413_791_999_999, r.int(2 ** 31), ...(valid ? [] : [-1, -1_700_000_000_123, 10_413_792_000_000, 999_999_999_999_999, -999_999_999_999_999, 2 ** 53 - 1, -(2 ** 53 - 1)])]),
    workspaceId: str(),
    linkId: idText(),
    campaignId: str(),
    visitorId: str(),
    country: odd() ? str() : r.int(3) === 0 ? null : r.pick(valid ? ['DE', 'US', '  '] : ['DE', 'US', 'é1', 'X', 'ABC', '😀']),
    region: maybe(),
    city: maybe(),
    deviceClass: odd() ? str() : r.pick(['mobile', 'tablet', 'desktop']),
    os: odd() ? str() : r.pick([null, 'ios', 'android', 'windows', 'macos', 'linux', 'chromeos', 'harmonyos', 'other']),
    browser: maybe(),
    referrerHost: maybe(),
    utmSource: maybe(),
    utmMedium: maybe(),
    utmCampaign: maybe(),
    utmTerm: maybe(),
    utmContent: maybe(),
    source: odd() ? str() : r.pick(['link', 'qr']),
    ruleId: maybe(),
    destination: maybe(),
    bot: odd() ? r.pick([0, 1, 'true', null]) : r.next() < 0.5,
  };
  if (odd()) delete e[r.pick(Object.keys(e))];
  if (odd()) e.extra = str();
  return e;
}

function serialise(r: Random, e: Record<string, unknown>): string {
  switch (r.int(5)) {
    case 0:
      return JSON.stringify(e, null, r.int(2) === 0 ? 1 : undefined);
    case 1: {
      const keys = Object.keys(e);
      const a = r.int(keys.length);
      const b = r.int(keys.length);
      [keys[a], keys[b]] = [keys[b]!, keys[a]!];
      return JSON.stringify(Object.fromEntries(keys.map((k) => [k, e[k]])));
    }
    default:
      return JSON.stringify(e);
  }
}

function mutate(r: Random, line: string): string {
  const bytes = [...Buffer.from(line)];
  for (let n = 1 + r.int(3); n > 0; n--) {
    const at = r.int(bytes.length + 1);
    const byte = r.pick([0x22, 0x5c, 0x2c, 0x3a, 0x7b, 0x7d, 0x20, 0x30, 0x2d, 0x2e, 0x65, 0x6e, 0x00, 0x80, 0xc3, r.int(256)]);
    const op = r.int(3);
    if (op === 0) bytes.splice(at, 1);
    else if (op === 1) bytes.splice(at, 0, byte);
    else bytes[Math.min(at, bytes.length - 1)] = byte;
  }
  return Buffer.from(bytes).toString('latin1');
}

const newBatch = () => new EventBatch(clickEvents.newBody(16), { keepLinkIds: true });

/** The zod path for one line: a batch with its row, or null when the line can never be stored. */
function zodPath(bytes: Buffer) {
  let row = null;
  try {
    row = clickEvents.parse(JSON.parse(new TextDecoder().decode(bytes)));
  } catch (err) {
    if (err instanceof SyntaxError) return null;
    throw err;
  }
  if (!row) return null;
  const batch = newBatch();
  clickEvents.write(batch.body, row);
  batch.add(row.click_id, row.ts, row.link_id);
  return batch;
}

function check(bytes: Buffer): 'fast' | 'declined' {
  const fast = newBatch();
  // Mid-buffer, so offsets other than 0 are exercised.
  const padded = Buffer.concat([Buffer.from('xx\n'), bytes, Buffer.from('\nyy')]);
  const taken = fastLine(padded, 3, 3 + bytes.length, fast);
  if (!taken) {
    expect(fast.count).toBe(0);
    expect(fast.body.rows).toBe(0);
    expect(fast.body.data.every((column) => column.length === 0)).toBe(true);
    return 'declined';
  }
  const slow = zodPath(bytes);
  expect(slow, bytes.toString('latin1')).not.toBeNull();
  expect(fast.body.bytes().toString('hex')).toBe(slow!.body.bytes().toString('hex'));
  expect([fast.ids, fast.linkIds, fast.oldestTs]).toEqual([slow!.ids, slow!.linkIds, slow!.oldestTs]);
  return 'fast';
}

describe('the fast line path for clicks', () => {
  it('exists for the current click schema and events columns', () => {
    expect(typeof clickEvents.fastLine).toBe('function');
  });

  it('takes what redirectors send for plain-text events', () => {
    const r = random(1);
    for (let i = 0; i < 2000; i++) {
      const e = clickEventSchema.parse(event(r, true));
      expect(check(Buffer.from(JSON.stringify(e))), JSON.stringify(e)).toBe('fast');
    }
  });

  it('takes text beyond ASCII, as redirectors send it, in the free-text fields', () => {
    // Place names, a referrer host and UTM values as visitors' links carry them: two-, three- and four-byte UTF-8.
    const e = clickEventSchema.parse({
      ...event(random(3), true),
      region: 'Île-de-France',
      city: 'München',
      referrerHost: 'bücher.example',
      utmCampaign: 'ação 😀',
      utmTerm: '東京\u2028',
    });
    expect(check(Buffer.from(JSON.stringify(e)))).toBe('fast');
  });

  it('writes exactly the zod path’s row for every line it takes, on generated and mutated lines', () => {
    const r = random(42);
    const outcomes = { fast: 0, declined: 0 };
    let fastBeyondAscii = 0;
    for (let i = 0; i < 20_000; i++) {
      const line = serialise(r, event(r));
      const bytes = Buffer.from(line);
      const outcome = check(bytes);
      outcomes[outcome]++;
      if (outcome === 'fast' && bytes.some((b) => b >= 0x80)) fastBeyondAscii++;
      outcomes[check(Buffer.from(mutate(r, line), 'latin1'))]++;
    }
    // Both branches were exercised in bulk, and lines with text beyond ASCII were taken too.
    expect(outcomes.fast).toBeGreaterThan(2_500);
    expect(outcomes.declined).toBeGreaterThan(5_000);
    expect(fastBeyondAscii).toBeGreaterThan(500);
    // 80k lines checked both ways: ~10 s alone, several times that on a busy machine.
  }, 120_000);

  it('declines what it cannot vouch for, leaving it to zod', () => {
    const good = JSON.stringify({
      id: 'ck_a',
      kind: 'click',
      ts: 1,
      workspaceId: 'ws',
      linkId: 'link',
      campaignId: '',
      visitorId: 'v',
      country: 'DE',
      region: 'Hesse',
      city: null,
      deviceClass: 'mobile',
      os: null,
      browser: 'Chrome',
      referrerHost: null,
      utmSource: null,
      utmMedium: null,
      utmCampaign: null,
      utmTerm: 'plain',
      utmContent: null,
      source: 'link',
      ruleId: null,
      destination: 'https://example.com/',
      bot: false,
    });
    expect(check(Buffer.from(good))).toBe('fast');
    for (const variant of [
      good.replace('"ts":1', '"ts":1.0'),
      good.replace('"ts":1', '"ts":1e0'),
      good.replace('"ts":1', '"ts":9007199254740992'),
      good.replace('"ts":1', '"ts":-9007199254740993'),
      good.replace('"ts":1', '"ts":10000000000000000'),
      good.replace('"ts":1', '"ts":01'),
      // Safe integers, but times no DateTime64(3) column holds as sent: zod refuses them too.
      good.replace('"ts":1', '"ts":-1'),
      good.replace('"ts":1', '"ts":10413792000000'),
      good.replace('"utmTerm":"plain"', '"utmTerm":"pl\\u0061in"'),
      good.replace('"utmTerm":"plain"', '"utmTerm":"pla\u0001in"'),
      good.replace('"id":"ck_a"', '"id":"ck_ä"'),
      good.replace('"linkId":"link"', '"linkId":"lïnk"'),
      good.replace('"country":"DE"', '"country":"DÉ"'),
      // Two bytes, but one UTF-16 unit: zod's exact length (2) refuses it.
      good.replace('"country":"DE"', '"country":"é"'),
      good.replace('{"id"', '{ "id"'),
      `${good}\r`,
      `${good} `,
      good.replace('}', ',"extra":1}'),
    ]) {
      expect(check(Buffer.from(variant)), variant).toBe('declined');
    }
    // Bytes that are not well-formed UTF-8 in a free-text field: TextDecoder turns each into
    // U+FFFD, so the zod path's bytes would differ from them. Overlongs, a surrogate encoded
    // in UTF-8, code points past U+10FFFF, a truncated sequence, a lone continuation byte.
    for (const bad of [[0xc0, 0xa9], [0xe0, 0x80, 0xa8], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], [0xe2, 0x82], [0x80]]) {
      const [head, tail] = good.split('plain');
      const line = Buffer.concat([Buffer.from(`${head}pl`), Buffer.from(bad), Buffer.from(`ain${tail}`)]);
      expect(check(line), bad.map((b) => b.toString(16)).join(' ')).toBe('declined');
    }
  });

  it('gives readMessage the same batch and the same dead letters with or without it, repeated ids included', () => {
    const r = random(99);
    for (let m = 0; m < 200; m++) {
      let text = r.int(10) === 0 ? '\ufeff' : '';
      const lines: string[] = [];
      for (let i = 0; i < 50; i++) {
        // Now and then an event again, as a redelivered message brings it.
        const line = lines.length > 0 && r.int(10) === 0 ? r.pick(lines) : serialise(r, event(r));
        lines.push(line);
        text += (r.int(8) === 0 ? mutate(r, line) : line) + r.pick(['\n', '\n', '\n', '\r\n', '\n\n']);
      }
      if (r.int(2) === 0) text = text.trimEnd();
      const data = Buffer.from(text, r.int(2) === 0 ? 'latin1' : 'utf8');
      const withFast = newBatch();
      const withoutFast = newBatch();
      const badWith = readMessage(clickEvents, data, withFast);
      const badWithout = readMessage({ ...clickEvents, fastLine: undefined }, data, withoutFast);
      expect(badWith).toEqual(badWithout);
      expect(withFast.body.bytes().equals(withoutFast.body.bytes())).toBe(true);
      expect([withFast.ids, withFast.linkIds, withFast.oldestTs]).toEqual([withoutFast.ids, withoutFast.linkIds, withoutFast.oldestTs]);
    }
  });

  it('with an origin check, stores only the events it passes and gives the same forged lines either way', () => {
    // A stand-in for the click-id MAC (shared/click-id-origin.ts): any predicate on id, link and time.
    const genuine = (id: string, linkId: string, ts: number) => (id.length + linkId.length + Math.abs(ts % 7)) % 3 !== 0;
    const r = random(7);
    let forgedSeen = 0;
    for (let m = 0; m < 100; m++) {
      // One event per line (an indented serialisation is joined back into one line).
      const lines = Array.from({ length: 30 }, () => serialise(r, event(r)).replace(/\n/g, ''));
      const data = Buffer.from(lines.join('\n'));
      const withFast = newBatch();
      const withoutFast = newBatch();
      const read = readMessage(clickEvents, data, withFast, genuine);
      expect(read).toEqual(readMessage({ ...clickEvents, fastLine: undefined }, data, withoutFast, genuine));
      expect(withFast.body.bytes().equals(withoutFast.body.bytes())).toBe(true);
      // Each valid event is stored when it passes the check and forged when it fails; invalid lines stay invalid.
      for (const line of lines) {
        let json: unknown;
        try {
          json = JSON.parse(line);
        } catch (err) {
          if (!(err instanceof SyntaxError)) throw err;
        }
        const parsed = clickEventSchema.safeParse(json);
        if (!parsed.success) {
          expect(read.invalid).toContain(line);
        } else if (genuine(parsed.data.id, parsed.data.linkId, parsed.data.ts)) {
          expect(withFast.ids).toContain(parsed.data.id);
        } else {
          expect(read.forged).toContain(line);
        }
      }
      forgedSeen += read.forged.length;
    }
    expect(forgedSeen).toBeGreaterThan(50);
  });
});
