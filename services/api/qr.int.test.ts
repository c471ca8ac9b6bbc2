import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { createTestClickHouse, type TestClickHouse } from '../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { qrCodeListItemSchema, qrCodeSchema } from '../../shared/schemas/qr.ts';
import { REDIRECT_BASE_URL, startTestApi, type TestApi } from './testing/api-harness.ts';

// jsqr is CommonJS with an ESM-style `export default` in its types: NodeNext sees the module object.
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as unknown as typeof jsQRModule.default;

/** Decodes a PNG back to the text its QR code carries (null when unreadable). */
function decodePng(png: Buffer): string | null {
  const image = PNG.sync.read(png);
  return jsQR(new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length), image.width, image.height)?.data ?? null;
}

/** Modules on a side of the symbol `qrcode` makes of `url` (no quiet zone): what a size must leave room for. */
const symbolModules = (url: string, errorCorrection: string) => QRCode.create(url, { errorCorrectionLevel: errorCorrection as 'M' }).modules.size;

/**
 * Reads a PNG back as a grid, failing unless it is `size` × `size` px of the two colours, the
 * symbol `qrcode` makes of `url` drawn with every module the same whole number of px (the
 * most that fit with `margin` modules of quiet zone a side), centred on the background.
 */
function expectWholeModules(png: Buffer, look: { url: string; size: number; margin: number; errorCorrection: string; foreground?: string; background?: string }): void {
  const label = JSON.stringify({ ...look, url: look.url.length });
  const image = PNG.sync.read(png);
  expect([image.width, image.height], label).toEqual([look.size, look.size]);
  const rgb = (hex: string) => parseInt(hex.slice(1), 16);
  const at = (x: number, y: number) => {
    const i = (y * image.width + x) * 4;
    return (image.data[i]! << 16) | (image.data[i + 1]! << 8) | image.data[i + 2]!;
  };
  const fg = rgb(look.foreground ?? '#000000');
  const bg = rgb(look.background ?? '#ffffff');
  const matrix = QRCode.create(look.url, { errorCorrectionLevel: look.errorCorrection as 'M' }).modules;
  const n = matrix.size;
  // The symbol's extent is that of its dark px: the finder patterns reach three of its edges, and the
  // timing and format modules the fourth.
  let [top, left, bottom, right] = [Infinity, Infinity, -1, -1];
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      const colour = at(x, y);
      if (colour !== fg && colour !== bg) expect.fail(`${label}: px ${x},${y} is #${colour.toString(16).padStart(6, '0')}, neither colour`);
      if (colour !== fg) continue;
      [top, left, bottom, right] = [Math.min(top, y), Math.min(left, x), Math.max(bottom, y), Math.max(right, x)];
    }
  }
  const scale = (right - left + 1) / n;
  expect(scale, `${label}: px a module`).toBe(Math.floor(look.size / (n + 2 * look.margin)));
  expect(bottom - top + 1, label).toBe(n * scale);
  // The quiet zone: at least margin modules a side, what is left over split evenly (one px more on the right or below at most).
  expect(Math.min(left, top), label).toBeGreaterThanOrEqual(look.margin * scale);
  expect(look.size - 1 - right - left, label).toBeGreaterThanOrEqual(0);
  expect(look.size - 1 - right - left, label).toBeLessThanOrEqual(1);
  expect(top, label).toBe(left);
  for (let y = top; y <= bottom; y++) {
    for (let x = left; x <= right; x++) {
      const dark = matrix.get(Math.floor((y - top) / scale), Math.floor((x - left) / scale));
      if ((at(x, y) === fg) !== Boolean(dark)) expect.fail(`${label}: px ${x},${y} is not its module's colour`);
    }
  }
}

/** Paints an SVG's foreground rectangles (`M x y h w v h h -w z`, whole px) on a size × size grid. */
function svgPixels(svg: string, size: number, foreground: string): boolean[] {
  const paths = [...svg.matchAll(/<path fill="(#[0-9a-f]{6})" d="([^"]*)"\/>/g)];
  const d = paths.find(([, fill]) => fill === foreground)![2]!;
  const px = new Array<boolean>(size * size).fill(false);
  for (const [, x, y, w, h] of d.matchAll(/M(\d+) (\d+)h(\d+)v(\d+)h-\3z/g)) {
    for (let j = +y!; j < +y! + +h!; j++) for (let i = +x!; i < +x! + +w!; i++) px[j * size + i] = true;
  }
  return px;
}

const fromDataUri = (uri: string, type: string): Buffer => {
  const prefix = `data:${type};base64,`;
  expect(uri.startsWith(prefix)).toBe(true);
  return Buffer.from(uri.slice(prefix.length), 'base64');
};

describe('QR codes API on postgres', () => {
  let api: TestApi;
  let key: string;
  let linkId: string;
  let shortUrl: string;

  const newLink = async (k = key) => (await api.request('POST', '/links', { key: k, body: { destinationUrl: 'https://example.com/qr' } })).body.data as { id: string; shortUrl: string };
  const postQr = (body: object, k = key) => api.request('POST', '/qr', { key: k, body });
  const fetchImage = async (path: string, k = key) => {
    const res = await fetch(api.url + path, { headers: { authorization: `Bearer ${k}` } });
    return { status: res.status, type: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
  };

  beforeAll(async () => {
    api = await startTestApi('postgres');
    ({ key } = await api.tenant());
    ({ id: linkId, shortUrl } = await newLink());
  });
  afterAll(() => api?.close());

  it('encodes the QR marker the deployment names (QR_MARKER_PARAM, as its redirectors read it)', async () => {
    const custom = await startTestApi('postgres', { env: { QR_MARKER_PARAM: 'scan' } });
    try {
      const { key: own } = await custom.tenant();
      const link = (await custom.request('POST', '/links', { key: own, body: { destinationUrl: 'https://example.com/qr' } })).body.data;
      const res = await custom.request('POST', '/qr', { key: own, body: { linkId: link.id } });
      expect(res.status).toBe(201);
      expect(res.body.data.encodedUrl).toBe(`${link.shortUrl}?scan=1`);
      expect(res.body.data.current).toBe(true);
      expect(decodePng(fromDataUri(res.body.data.dataUri, 'image/png'))).toBe(`${link.shortUrl}?scan=1`);
      // A code made before the marker was changed (as an earlier deployment stored it) is listed as not current.
      const before = (await custom.request('POST', '/qr', { key: own, body: { linkId: link.id, size: 256 } })).body.data;
      await custom.db.sql`UPDATE qr_codes SET encoded_url = ${`${link.shortUrl}?qr=1`} WHERE id = ${before.id}`;
      const listed = (await custom.request('GET', `/qr/${link.id}`, { key: own })).body.data as Array<{ id: string; current: boolean }>;
      expect(listed.map((c) => [c.id, c.current])).toEqual([
        [before.id, false],
        [res.body.data.id, true],
      ]);
    } finally {
      await custom.close();
    }
  });

  it('creates a PNG with defaults (201) that decodes to the short URL with the QR marker', async () => {
    const res = await postQr({ linkId });
    expect(res.status).toBe(201);
    const qr = qrCodeSchema.strict().parse(res.body.data);
    expect(qr).toMatchObject({ linkId, format: 'png', size: 512, margin: 2, foreground: '#000000', background: '#ffffff', errorCorrection: 'M' });
    expect(qr.id).toMatch(/^qr_/);
    expect(shortUrl.startsWith(REDIRECT_BASE_URL)).toBe(true);
    expect(qr.encodedUrl).toBe(`${shortUrl}?qr=1`);
    expect(qr.imageUrl).toBe(`/qr/${linkId}/${qr.id}.png`);

    const png = fromDataUri(qr.dataUri, 'image/png');
    expect(PNG.sync.read(png).width).toBe(512);
    expect(decodePng(png)).toBe(qr.encodedUrl);

    const served = await fetchImage(qr.imageUrl);
    expect(served.status).toBe(200);
    expect(served.type).toBe('image/png');
    expect(served.bytes.equals(png)).toBe(true);
    expect(decodePng(served.bytes)).toBe(qr.encodedUrl);
  });

  it('honours size, margin, colours (normalised to lowercase) and error correction', async () => {
    const res = await postQr({ linkId, size: 300, margin: 0, foreground: '#1A237E', background: '#FFF8E1', errorCorrection: 'H' });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ size: 300, margin: 0, foreground: '#1a237e', background: '#fff8e1', errorCorrection: 'H' });
    const png = fromDataUri(res.body.data.dataUri, 'image/png');
    expect(PNG.sync.read(png).width).toBe(300);
    expect(decodePng(png)).toBe(res.body.data.encodedUrl);
  });

  it('creates and serves SVG as image/svg+xml', async () => {
    const res = await postQr({ linkId, format: 'svg', foreground: '#222222' });
    expect(res.status).toBe(201);
    const qr = qrCodeSchema.parse(res.body.data);
    expect(qr.imageUrl).toBe(`/qr/${linkId}/${qr.id}.svg`);
    const svg = fromDataUri(qr.dataUri, 'image/svg+xml').toString('utf8');
    expect(svg).toContain('<svg');
    expect(svg).toContain('#222222');
    const served = await fetchImage(qr.imageUrl);
    expect(served.status).toBe(200);
    expect(served.type).toContain('image/svg+xml');
    expect(served.bytes.toString('utf8')).toBe(svg);
    // The other extension, an unknown id or an unknown link is not an image of this record.
    expect((await fetchImage(`/qr/${linkId}/${qr.id}.png`)).status).toBe(404);
    expect((await fetchImage(`/qr/${linkId}/${qr.id}.gif`)).status).toBe(404);
    expect((await fetchImage(`/qr/${linkId}/qr_nope.svg`)).status).toBe(404);
    expect((await fetchImage(`/qr/link_nope/${qr.id}.svg`)).status).toBe(404);
  });

  it("lists a link's QR records newest first, paginated", async () => {
    const link = await newLink();
    const ids: string[] = [];
    for (const size of [100, 200, 300]) ids.push((await postQr({ linkId: link.id, size })).body.data.id);
    const all = await api.request('GET', `/qr/${link.id}`, { key });
    expect(all.status).toBe(200);
    expect(all.body.data.map((q: { id: string }) => q.id)).toEqual([...ids].reverse());
    expect(all.body.pagination).toEqual({ page: 1, limit: 20, total: 3, totalPages: 1 });
    for (const item of all.body.data) expect(qrCodeListItemSchema.strict().safeParse(item).success).toBe(true);
    // Items equal the create answers minus the data URI.
    const first = (await postQr({ linkId: link.id, format: 'svg' })).body.data;
    const { dataUri: _dataUri, ...withoutImage } = first;
    expect((await api.request('GET', `/qr/${link.id}?limit=1`, { key })).body.data).toEqual([withoutImage]);
    const page2 = await api.request('GET', `/qr/${link.id}?page=2&limit=2`, { key });
    expect(page2.body.data.map((q: { id: string }) => q.id)).toEqual([ids[1], ids[0]]);
    expect(page2.body.pagination).toEqual({ page: 2, limit: 2, total: 4, totalPages: 2 });
    expect((await api.request('GET', `/qr/${link.id}?limit=0`, { key })).status).toBe(400);
    const empty = await newLink();
    expect((await api.request('GET', `/qr/${empty.id}`, { key })).body.data).toEqual([]);
  });

  it('refuses bad input with 400 naming the field', async () => {
    const stranger = await api.tenant();
    const foreign = await newLink(stranger.key);
    const deleted = await newLink();
    expect((await api.request('DELETE', `/links/${deleted.id}`, { key })).status).toBe(200);
    const cases: Array<[object, string]> = [
      [{}, 'linkId'],
      [{ linkId: 'link_nope' }, 'linkId'],
      [{ linkId: foreign.id }, 'linkId'],
      [{ linkId: deleted.id }, 'linkId'],
      [{ linkId, size: 10 }, 'size'],
      [{ linkId, size: 5000 }, 'size'],
      [{ linkId, size: 100.5 }, 'size'],
      [{ linkId, margin: -1 }, 'margin'],
      [{ linkId, margin: 17 }, 'margin'],
      [{ linkId, foreground: 'red' }, 'foreground'],
      [{ linkId, background: '#fff' }, 'background'],
      [{ linkId, foreground: '#ABCDEF', background: '#abcdef' }, 'background'],
      [{ linkId, foreground: '#777777', background: '#888888' }, 'background'],
      [{ linkId, errorCorrection: 'X' }, 'errorCorrection'],
      [{ linkId, format: 'gif' }, 'format'],
      [{ linkId, color: '#000000' }, 'color'],
    ];
    for (const [body, path] of cases) {
      const res = await postQr(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.map((d: { path: string }) => d.path), JSON.stringify(body)).toEqual([path]);
    }
    const same = await postQr({ linkId, foreground: '#ABCDEF', background: '#abcdef' });
    expect(same.body.error.details[0].message).toContain('differ');
    const low = await postQr({ linkId, foreground: '#777777', background: '#888888' });
    expect(low.body.error.details[0].message).toContain('contrast');
    expect(low.body.error.details[0].message).toContain('scanners');
  });

  /**
   * A short URL as long as a custom domain's (the reviewer's https://go.brand-example.com/spring-sale?qr=1),
   * a generated code's, and a long custom code's: 29 to 53 modules a side across the error corrections.
   */
  describe('an image is exactly size × size px of whole-pixel modules, or the size is refused', () => {
    let brand: TestApi;
    let own: string;
    let workspaceId: string;
    let links: Array<{ id: string; url: string }>;
    const post = (body: object) => brand.request('POST', '/qr', { key: own, body });

    beforeAll(async () => {
      brand = await startTestApi('postgres', { env: { REDIRECT_BASE_URL: 'https://go.brand-example.com' } });
      ({ key: own, workspaceId } = await brand.tenant());
      links = [];
      for (const shortCode of ['spring-sale', undefined, 'a-long-custom-code-for-the-autumn-2026-catalogue-mailing-page-01']) {
        const link = (await brand.request('POST', '/links', { key: own, body: { destinationUrl: 'https://example.com/qr', shortCode } })).body.data;
        links.push({ id: link.id, url: `${link.shortUrl}?qr=1` });
      }
      expect(links[0]!.url).toBe('https://go.brand-example.com/spring-sale?qr=1');
    });
    afterAll(() => brand?.close());

    it("the reviewer's cases: size 64 at margin 16 and H, or at margin 4 and M or L, is refused naming the minimum; 78, 115, 156 and 307 at the defaults are that wide", async () => {
      const [{ id: linkId, url }] = links as [{ id: string; url: string }];
      for (const [margin, errorCorrection, minimum] of [[16, 'H', 146], [4, 'M', 82], [4, 'L', 74]] as const) {
        const res = await post({ linkId, size: 64, margin, errorCorrection });
        expect(res.status, `${margin} ${errorCorrection}`).toBe(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
        expect(res.body.error.details).toEqual([{ path: 'size', message: `must be at least ${minimum} for this link at margin ${margin} and error correction ${errorCorrection} (2 px a module)` }]);
        expect((await post({ linkId, size: minimum, margin, errorCorrection })).status).toBe(201);
      }
      for (const size of [78, 115, 156, 307]) {
        const res = await post({ linkId, size });
        expect(res.status).toBe(201);
        expect(res.body.data).toMatchObject({ size, margin: 2, errorCorrection: 'M', encodedUrl: url });
        const png = fromDataUri(res.body.data.dataUri, 'image/png');
        expectWholeModules(png, { url, size, margin: 2, errorCorrection: 'M' });
        expect(decodePng(png)).toBe(url);
        const served = await fetch(brand.url + res.body.data.imageUrl, { headers: { authorization: `Bearer ${own}` } });
        expect(Buffer.from(await served.arrayBuffer()).equals(png)).toBe(true);
      }
    });

    it('every size, margin, error correction and URL length: 400 below 2 px a module, else exactly size px that jsQR decodes', async () => {
      let made = 0;
      for (const { id: linkId, url } of links) {
        for (const errorCorrection of ['L', 'M', 'Q', 'H'] as const) {
          for (const margin of [0, 1, 2, 4, 16]) {
            const minimum = 2 * (symbolModules(url, errorCorrection) + 2 * margin);
            const sizes = [...new Set([64, 77, 78, 100, 115, 129, 156, 199, 307, minimum - 1, minimum, minimum + 1, 3 * minimum / 2 + 1])].filter((s) => s >= 64 && s <= 2048);
            for (const size of sizes) {
              const res = await post({ linkId, size, margin, errorCorrection });
              const label = `${url.length} chars, ${errorCorrection}, margin ${margin}, size ${size}`;
              if (size < minimum) {
                expect(res.status, label).toBe(400);
                expect(res.body.error.details.map((d: { path: string }) => d.path), label).toEqual(['size']);
                expect(res.body.error.details[0].message, label).toContain(`at least ${minimum} `);
                continue;
              }
              expect(res.status, label).toBe(201);
              const png = fromDataUri(res.body.data.dataUri, 'image/png');
              expectWholeModules(png, { url, size, margin, errorCorrection });
              expect(decodePng(png), label).toBe(url);
              made++;
            }
          }
        }
      }
      expect(made).toBeGreaterThan(400);
    }, 120_000);

    it('large sizes, colours and the largest margin keep whole modules; an SVG is the same pixels as the PNG', async () => {
      const [, { id: linkId, url }, long] = links as [unknown, { id: string; url: string }, { id: string; url: string }];
      for (const [size, margin, errorCorrection] of [[1024, 2, 'M'], [2047, 16, 'H'], [2048, 0, 'L'], [1000, 4, 'Q']] as const) {
        for (const link of [{ id: linkId, url }, long]) {
          const look = { size, margin, errorCorrection, foreground: '#1a237e', background: '#fff8e1' };
          const png = fromDataUri((await post({ linkId: link.id, ...look })).body.data.dataUri, 'image/png');
          expectWholeModules(png, { url: link.url, ...look });
          expect(decodePng(png)).toBe(link.url);
        }
      }
      for (const [size, margin, errorCorrection] of [[78, 2, 'M'], [115, 0, 'H'], [307, 4, 'L'], [512, 2, 'M']] as const) {
        const look = { size, margin, errorCorrection, foreground: '#1a237e', background: '#fff8e1' };
        const svg = fromDataUri((await post({ linkId, format: 'svg', ...look })).body.data.dataUri, 'image/svg+xml').toString('utf8');
        expect(svg).toMatch(new RegExp(`^<svg [^>]*width="${size}" height="${size}" viewBox="0 0 ${size} ${size}"`));
        const image = PNG.sync.read(fromDataUri((await post({ linkId, ...look })).body.data.dataUri, 'image/png'));
        const painted = svgPixels(svg, size, look.foreground);
        const dark = Array.from({ length: size * size }, (_, i) => image.data[i * 4] === 0x1a);
        expect(painted.join() === dark.join(), JSON.stringify(look)).toBe(true);
      }
      // Eight 1,000-2,048 px images decoded by jsQR and four SVGs rasterised here: 17 s on
      // a quiet 2-core machine, past 30 s beside other suites (CI at 51ff29d).
    }, 120_000);

    it('a record stored before sizes were checked, smaller than 2 px a module, is still drawn with whole modules', async () => {
      const [{ id: linkId, url }] = links as [{ id: string; url: string }];
      // Inserted as such a release stored it (an image made by POST would be the one kept rendered).
      await brand.db.sql`
        INSERT INTO qr_codes (id, workspace_id, link_id, format, size, margin, foreground, background, error_correction, encoded_url)
        VALUES ('qr_legacy64', ${workspaceId}, ${linkId}, 'png', 64, 2, '#000000', '#ffffff', 'M', ${url})`;
      const served = Buffer.from(await (await fetch(`${brand.url}/qr/${linkId}/qr_legacy64.png`, { headers: { authorization: `Bearer ${own}` } })).arrayBuffer());
      // 37 modules with the margin: 1 px each, in 64 px.
      expectWholeModules(served, { url, size: 64, margin: 2, errorCorrection: 'M' });
      expect(decodePng(served)).toBe(url);
    });
  });

  it('needs qr:write to create and links:read to read; other workspaces get 404', async () => {
    const reader = await api.tenant({ scopes: ['links:read'] });
    const noRead = await api.tenant({ scopes: ['qr:write'] });
    const forbidden = await postQr({ linkId }, reader.key);
    expect(forbidden.status).toBe(403);
    expect((await api.request('GET', `/qr/${linkId}`, { key: noRead.key })).status).toBe(403);
    expect((await api.request('POST', '/qr', { body: { linkId } })).status).toBe(401);

    const created = (await postQr({ linkId })).body.data;
    const stranger = await api.tenant();
    expect((await api.request('GET', `/qr/${linkId}`, { key: stranger.key })).status).toBe(404);
    expect((await fetchImage(created.imageUrl, stranger.key)).status).toBe(404);
    expect((await api.request('GET', '/qr/link_nope', { key })).status).toBe(404);

    const doomed = await newLink();
    await postQr({ linkId: doomed.id });
    await api.request('DELETE', `/links/${doomed.id}`, { key });
    expect((await api.request('GET', `/qr/${doomed.id}`, { key })).status).toBe(404);
  });
});

/** Scans of a QR code are events with source `qr`; the overview can count them apart from `link` clicks. */
describe('analytics split by source (qr / link)', () => {
  let ch: TestClickHouse;
  let client: ClickHouseClient;
  let api: TestApi;
  let key: string;
  let workspaceId: string;

  beforeAll(async () => {
    ch = await createTestClickHouse();
    client = connectClickHouse(ch.url);
    await migrateClickHouse(client);
    api = await startTestApi('postgres', { analytics: client });
    ({ key, workspaceId } = await api.tenant());
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await client?.close();
    await ch?.close();
  });

  const event = (linkId: string, n: number, source: 'link' | 'qr', visitor: string) => ({
    workspace_id: workspaceId, link_id: linkId, ts: Date.parse('2026-11-20T10:00:00Z') + n * 1000, click_id: `ck_${linkId}_${n}`,
    kind: 'click', campaign_id: 'campaign_x', visitor_id: visitor, country: 'US', device_class: source === 'qr' ? 'mobile' : 'desktop',
    os: '', browser: '', referrer_host: '', utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '', source,
    rule_id: '', destination: 'https://example.com', bot: false,
  });

  it('GET /analytics?source=qr counts only QR scans, source=link only plain clicks, none both', async () => {
    const linkId = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/s' } })).body.data.id;
    const rows = [
      ...Array.from({ length: 3 }, (_, i) => event(linkId, i, 'qr', `q${i % 2}`)),
      ...Array.from({ length: 5 }, (_, i) => event(linkId, 10 + i, 'link', `l${i}`)),
    ];
    await client.insert({ table: 'events', values: rows, format: 'JSONEachRow' });

    const range = 'from=2026-11-20&to=2026-11-20';
    const qr = await api.request('GET', `/analytics?${range}&source=qr`, { key });
    expect(qr.status).toBe(200);
    expect(qr.body.data.summary).toMatchObject({ totalClicks: 3, uniqueClicks: 2 });
    expect(qr.body.data.devices).toEqual({ mobile: 100, desktop: 0, tablet: 0 });
    expect(qr.body.data.topLinks).toEqual([expect.objectContaining({ linkId, clicks: 3 })]);
    const link = await api.request('GET', `/analytics?${range}&source=link`, { key });
    expect(link.body.data.summary).toMatchObject({ totalClicks: 5, uniqueClicks: 5 });
    const all = await api.request('GET', `/analytics?${range}`, { key });
    expect(all.body.data.summary.totalClicks).toBe(8);
    const one = await api.request('GET', `/analytics/${linkId}?${range}&source=qr`, { key });
    expect(one.body.data.summary.totalClicks).toBe(3);

    const bad = await api.request('GET', `/analytics?${range}&source=email`, { key });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { path: string }) => d.path)).toEqual(['source']);
  });
});
