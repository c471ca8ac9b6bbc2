import QRCode from 'qrcode';
import { PNG } from 'pngjs';
import { MIN_QR_MODULE_PX, type QrErrorCorrection, type QrFormat } from '../../shared/schemas/qr.ts';

/** What an image is made from: a QR record's stored parameters. */
export interface QrLook {
  format: QrFormat;
  size: number;
  margin: number;
  foreground: string;
  background: string;
  errorCorrection: QrErrorCorrection;
  encodedUrl: string;
}

type QrSymbol = Pick<QrLook, 'encodedUrl' | 'errorCorrection' | 'margin'>;

/** Modules on a side of the code, its quiet zone (`margin` modules each side) included. */
export function qrSideModules(look: QrSymbol): number {
  return QRCode.create(look.encodedUrl, { errorCorrectionLevel: look.errorCorrection }).modules.size + 2 * look.margin;
}

/** The smallest `size` at which each module of this code gets MIN_QR_MODULE_PX whole pixels. */
export function qrMinSize(look: QrSymbol): number {
  return qrSideModules(look) * MIN_QR_MODULE_PX;
}

interface Layout {
  /** Side of the image in px: the record's size (more only for a stored record too small for 1 px modules). */
  canvas: number;
  /** Modules of the symbol on a side (no quiet zone). */
  modules: number;
  /** Whole px per module: a fractional one makes modules uneven and scanners misread them. */
  scale: number;
  /** Px from the image's edge to the symbol: the margin plus half the pixels the scale leaves over. */
  offset: number;
  dark(row: number, col: number): boolean;
}

function layout(look: QrLook): Layout {
  const { modules: matrix } = QRCode.create(look.encodedUrl, { errorCorrectionLevel: look.errorCorrection });
  const side = matrix.size + 2 * look.margin;
  // POST /qr refuses a size under qrMinSize; a record stored before it did may be smaller. Such
  // a record still gets whole-pixel modules (at least 1 px, the image outgrowing its size only
  // when not even that fits), as any other image would read worse.
  const scale = Math.max(1, Math.floor(look.size / side));
  const canvas = Math.max(look.size, side * scale);
  return {
    canvas,
    modules: matrix.size,
    scale,
    offset: look.margin * scale + Math.floor((canvas - side * scale) / 2),
    dark: (row, col) => Boolean(matrix.get(row, col)),
  };
}

const rgb = (hex: string): [number, number, number] => [parseInt(hex.slice(1, 3), 16), parseInt(hex.slice(3, 5), 16), parseInt(hex.slice(5, 7), 16)];

function renderPng(look: QrLook, { canvas, modules, scale, offset, dark }: Layout): Promise<Buffer> {
  const png = new PNG({ width: canvas, height: canvas, colorType: 2, inputColorType: 6, inputHasAlpha: true });
  const [lr, lg, lb] = rgb(look.background);
  const [dr, dg, db] = rgb(look.foreground);
  const data = png.data;
  for (let i = 0; i < data.length; i += 4) {
    data[i] = lr;
    data[i + 1] = lg;
    data[i + 2] = lb;
    data[i + 3] = 255;
  }
  for (let row = 0; row < modules; row++) {
    for (let col = 0; col < modules; col++) {
      if (!dark(row, col)) continue;
      for (let y = offset + row * scale; y < offset + (row + 1) * scale; y++) {
        for (let x = offset + col * scale; x < offset + (col + 1) * scale; x++) {
          const i = (y * canvas + x) * 4;
          data[i] = dr;
          data[i + 1] = dg;
          data[i + 2] = db;
        }
      }
    }
  }
  // Packed as a stream, as `qrcode` did: zlib deflates on its thread pool, so a large code does not stall other requests.
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    png.on('data', (chunk: Buffer) => chunks.push(chunk));
    png.on('end', () => resolve(Buffer.concat(chunks)));
    png.on('error', reject);
    png.pack();
  });
}

/** The same pixels as the PNG, in px units, so an SVG shown at its width and height is that PNG. */
function renderSvg(look: QrLook, { canvas, modules, scale, offset, dark }: Layout): string {
  let path = '';
  for (let row = 0; row < modules; row++) {
    for (let col = 0; col < modules; ) {
      if (!dark(row, col)) {
        col++;
        continue;
      }
      let end = col + 1;
      while (end < modules && dark(row, end)) end++;
      path += `M${offset + col * scale} ${offset + row * scale}h${(end - col) * scale}v${scale}h-${(end - col) * scale}z`;
      col = end;
    }
  }
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" width="${canvas}" height="${canvas}" viewBox="0 0 ${canvas} ${canvas}" shape-rendering="crispEdges">` +
    `<path fill="${look.background}" d="M0 0h${canvas}v${canvas}H0z"/><path fill="${look.foreground}" d="${path}"/></svg>\n`
  );
}

/**
 * Renders the stored parameters (`qrcode` is deterministic, so a record needs no stored image):
 * a `size` × `size` image, each module the same whole number of px, the pixels that leaves over
 * added to the quiet zone around the centred symbol. `qrcode`'s own `width` cannot do that: it
 * scales by size / modules, so uneven modules or a px short, and ignores a width too small.
 */
export async function renderQr(look: QrLook): Promise<Buffer> {
  const at = layout(look);
  return look.format === 'svg' ? Buffer.from(renderSvg(look, at), 'utf8') : renderPng(look, at);
}
