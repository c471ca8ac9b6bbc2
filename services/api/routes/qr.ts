import type Router from '@koa/router';
import { AppError } from '../../../shared/errors.ts';
import { parseInput } from '../../../shared/schemas/validation.ts';
import { pagination } from '../../../shared/schemas/common.ts';
import { MIN_QR_MODULE_PX, qrCreateSchema, qrListQuerySchema, type QrCode, type QrCodeListItem } from '../../../shared/schemas/qr.ts';
import { principalOf, type RequireScope } from '../middleware/auth.ts';
import { bodyOf } from '../middleware/json-body.ts';
import { created, okList } from '../respond.ts';
import { qrMinSize, renderQr } from '../qr-image.ts';
import type { PresentLink } from '../link-presenter.ts';
import type { LinkStore } from '../stores/link-store.ts';
import type { QrRecord, QrStore } from '../stores/qr-store.ts';

export interface QrRouteDeps {
  qr: QrStore;
  links: Pick<LinkStore, 'byId'>;
  presentLink: PresentLink;
  requireScope: RequireScope;
  /** The query parameter the redirector reads as a QR scan (QR_MARKER_PARAM, which both parse). */
  qrMarkerParam: string;
}

const contentTypes = { png: 'image/png', svg: 'image/svg+xml' } as const;

/** The short URL with the QR marker added (keeping any query it may already have). */
export function qrEncodedUrl(shortUrl: string, marker: string): string {
  const url = new URL(shortUrl);
  url.searchParams.set(marker, '1');
  return url.toString();
}

const imageUrl = (record: QrRecord) => `/qr/${encodeURIComponent(record.linkId)}/${encodeURIComponent(record.id)}.${record.format}`;

/** `encodedUrl`: what a code of the link made now encodes (current is whether the record's equals it). */
const presentListItem = (record: QrRecord, encodedUrl: string): QrCodeListItem => ({ ...record, current: record.encodedUrl === encodedUrl, imageUrl: imageUrl(record) });

/** Records never change, so a few recent images are kept rendered (a 2048 px PNG takes ~0.3 s). */
const IMAGE_CACHE_ENTRIES = 32;

const linkNotFound = () => new AppError('NOT_FOUND', 'Link not found');

/** Creating QR codes needs `qr:write`; reading them `links:read`. */
export function qrRoutes(router: Router, deps: QrRouteDeps): void {
  const { qr, links, requireScope } = deps;
  const marker = deps.qrMarkerParam;
  const images = new Map<string, Buffer>();

  async function imageOf(record: QrRecord): Promise<Buffer> {
    const cached = images.get(record.id);
    if (cached) {
      images.delete(record.id);
      images.set(record.id, cached);
      return cached;
    }
    const image = await renderQr(record);
    images.set(record.id, image);
    if (images.size > IMAGE_CACHE_ENTRIES) images.delete(images.keys().next().value!);
    return image;
  }

  async function presentQr(record: QrRecord): Promise<QrCode> {
    const image = await imageOf(record);
    return { ...presentListItem(record, record.encodedUrl), dataUri: `data:${contentTypes[record.format]};base64,${image.toString('base64')}` };
  }

  router.post('/qr', requireScope('qr:write'), async (ctx) => {
    const input = parseInput(qrCreateSchema, await bodyOf(ctx), 'QR code');
    const workspaceId = principalOf(ctx).workspaceId;
    const link = await links.byId(workspaceId, input.linkId);
    if (!link || link.deletedAt) throw new AppError('VALIDATION_ERROR', 'Invalid QR code', [{ path: 'linkId', message: 'link not found' }]);
    const encodedUrl = qrEncodedUrl(deps.presentLink(link).shortUrl, marker);
    // How small a code can be depends on what it encodes, so the schema cannot say it alone.
    const minSize = qrMinSize({ encodedUrl, errorCorrection: input.errorCorrection, margin: input.margin });
    if (input.size < minSize) {
      throw new AppError('VALIDATION_ERROR', 'Invalid QR code', [
        { path: 'size', message: `must be at least ${minSize} for this link at margin ${input.margin} and error correction ${input.errorCorrection} (${MIN_QR_MODULE_PX} px a module)` },
      ]);
    }
    const record = await qr.create(workspaceId, input, encodedUrl);
    created(ctx, await presentQr(record));
  });

  router.get('/qr/:linkId', requireScope('links:read'), async (ctx) => {
    const query = parseInput(qrListQuerySchema, ctx.query, 'query');
    const workspaceId = principalOf(ctx).workspaceId;
    const link = await links.byId(workspaceId, ctx.params.linkId!);
    if (!link || link.deletedAt) throw linkNotFound();
    const { items, total } = await qr.listForLink(workspaceId, link.id, query);
    const encodedNow = qrEncodedUrl(deps.presentLink(link).shortUrl, marker);
    okList(ctx, items.map((record) => presentListItem(record, encodedNow)), pagination(query.page, query.limit, total));
  });

  // One segment `{qrId}.{png|svg}`: two segments, so it never competes with the list route.
  router.get('/qr/:linkId/:file', requireScope('links:read'), async (ctx) => {
    const notFound = () => new AppError('NOT_FOUND', 'QR code not found');
    const match = /^(.+)\.(png|svg)$/.exec(ctx.params.file!);
    if (!match) throw notFound();
    const workspaceId = principalOf(ctx).workspaceId;
    const link = await links.byId(workspaceId, ctx.params.linkId!);
    if (!link || link.deletedAt) throw notFound();
    const record = await qr.get(workspaceId, link.id, match[1]!);
    if (!record || record.format !== match[2]) throw notFound();
    ctx.status = 200;
    ctx.type = contentTypes[record.format];
    ctx.set('cache-control', 'private, max-age=3600');
    ctx.body = await imageOf(record);
  });
}
