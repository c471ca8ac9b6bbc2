import { z } from 'zod';
import { isoTimestamp, paginationQuery } from './common.ts';

export const qrFormats = ['png', 'svg'] as const;
export type QrFormat = (typeof qrFormats)[number];
export const qrErrorCorrectionLevels = ['L', 'M', 'Q', 'H'] as const;
export type QrErrorCorrection = (typeof qrErrorCorrectionLevels)[number];

/**
 * The fewest whole px a module of a code may take. jsQR reads 1 px modules behind a quiet
 * zone, and phone cameras reading a screen manage 1 to 3; Denso Wave recommends 4 (what
 * `qrcode` draws by default) to scan everywhere. 2 keeps small sizes for short links while
 * refusing the 1 px codes many phones miss.
 */
export const MIN_QR_MODULE_PX = 2;

/** Below this WCAG contrast ratio between the two colours scanners often fail to read a code. */
export const MIN_QR_CONTRAST = 3;

const hexColor = z
  .string()
  .regex(/^#[0-9A-Fa-f]{6}$/, 'must be a colour like #RRGGBB')
  .transform((c) => c.toLowerCase());

function relativeLuminance(hex: string): number {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

/** WCAG 2 contrast ratio of two `#rrggbb` colours, 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [hi, lo] = [relativeLuminance(a), relativeLuminance(b)].sort((x, y) => y - x) as [number, number];
  return (hi + 0.05) / (lo + 0.05);
}

const whole = (min: number, max: number) =>
  z.number().int('must be a whole number').min(min, `must be ${min} to ${max}`).max(max, `must be ${min} to ${max}`);

/** `POST /qr`. Colours are normalised to lowercase. */
export const qrCreateSchema = z
  .strictObject({
    linkId: z.string().min(1).max(100),
    format: z.enum(qrFormats, { error: 'must be png or svg' }).default('png'),
    size: whole(64, 2048)
      .default(512)
      .describe(
        `Width and height of the image in px. Each module takes the same whole number of px, at least ${MIN_QR_MODULE_PX}, the px left over widening the quiet zone, so the smallest size a link takes is ${MIN_QR_MODULE_PX} × (its code's modules + 2 × margin): a smaller one is refused (400 naming size and that minimum). A code has more modules the longer its URL and the higher its error correction: a 45-character short URL at M has 33, so at margin 2 its smallest size is 74`,
      ),
    margin: whole(0, 16).default(2).describe('Quiet zone around the code, in modules (scanners need light around a code to find it)'),
    foreground: hexColor.default('#000000'),
    background: hexColor.default('#ffffff'),
    errorCorrection: z.enum(qrErrorCorrectionLevels, { error: 'must be L, M, Q or H' }).default('M'),
  })
  .superRefine((body, ctx) => {
    if (body.foreground === body.background) {
      ctx.addIssue({ code: 'custom', path: ['background'], message: 'must differ from foreground' });
    } else if (contrastRatio(body.foreground, body.background) < MIN_QR_CONTRAST) {
      const ratio = contrastRatio(body.foreground, body.background).toFixed(2);
      ctx.addIssue({
        code: 'custom',
        path: ['background'],
        message: `contrast with foreground is too low (${ratio}:1, at least ${MIN_QR_CONTRAST}:1 needed) for scanners to read the code`,
      });
    }
  })
  .meta({ id: 'QrCreate' });
export type QrCreate = z.output<typeof qrCreateSchema>;

export const qrCodeSchema = z.object({
  id: z.string(),
  linkId: z.string(),
  format: z.enum(qrFormats),
  size: z.number().int(),
  margin: z.number().int(),
  foreground: z.string(),
  background: z.string(),
  errorCorrection: z.enum(qrErrorCorrectionLevels),
  /** The short URL with the QR marker (`?qr=1`), so scans count as source `qr`. */
  encodedUrl: z.string(),
  /**
   * Whether encodedUrl is what a code made now would encode. False once the link moved to
   * another domain or the QR marker changed: a code printed before still opens what its
   * URL names (or not), and its scans may not count as `qr`.
   */
  current: z
    .boolean()
    .describe("Whether encodedUrl is what a code made now would encode (the link's short URL and the QR marker of today); false after a domain or marker change"),
  /** Path on this API that serves the image. */
  imageUrl: z.string(),
  /** The image as a `data:` URI (in the create answer only; lists give imageUrl). */
  dataUri: z.string(),
  createdAt: isoTimestamp,
})
  .meta({ id: 'QrCode' });
export type QrCode = z.infer<typeof qrCodeSchema>;

/**
 * An item of `GET /qr/{linkId}`: no data URI, since rendering a page of large PNGs
 * (about 0.3 s each at 2048 px) would stall the API; the image is at imageUrl.
 */
export const qrCodeListItemSchema = qrCodeSchema.omit({ dataUri: true }).meta({ id: 'QrCodeListItem' });
export type QrCodeListItem = z.infer<typeof qrCodeListItemSchema>;

export const qrListQuerySchema = z.strictObject({ ...paginationQuery });
