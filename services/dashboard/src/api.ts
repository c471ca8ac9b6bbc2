import { createLinkrouteClient, type paths } from '../../../shared/client/client.ts';
import { session } from './session.ts';
import { changes } from './changes.ts';

/**
 * The dashboard's one way to the API: the typed client generated from the
 * OpenAPI document, with the signed-in key, on this page's own origin. Every
 * failure becomes an ApiFailure that views show with a retry; a 401 signs out.
 */
export const api = createLinkrouteClient({ baseUrl: location.origin, apiKey: () => session.key() });

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix seconds when the oldest counted request leaves the hour. */
  reset: number;
}

let rateLimit: RateLimitState | null = null;
const rateLimitChanges = changes();
export const rateLimitState = {
  get: () => rateLimit,
  subscribe: rateLimitChanges.subscribe,
};

/** Every answer says what is left of the hour's quota, also the plain GETs below (CSV, QR images). */
function noteRateLimit(response: Response): void {
  const limit = Number(response.headers.get('x-ratelimit-limit'));
  if (limit > 0) {
    rateLimit = { limit, remaining: Number(response.headers.get('x-ratelimit-remaining')), reset: Number(response.headers.get('x-ratelimit-reset')) };
    rateLimitChanges.emit();
  }
}

api.use({
  onResponse({ response }) {
    noteRateLimit(response);
    return response;
  },
});

export class ApiFailure extends Error {
  constructor(
    /** 0: the API could not be reached. */
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Array<{ path: string; message: string }> = [],
    /** For 429 and 503: when to try again. */
    readonly retryAt: Date | null = null,
  ) {
    super(message);
  }
}

interface ErrorEnvelope {
  error?: { code?: string; message?: string; details?: Array<{ path: string; message: string }> };
}

function failureOf(response: Response, body: unknown): ApiFailure {
  const error = (body as ErrorEnvelope | undefined)?.error;
  const retryAfter = Number(response.headers.get('retry-after'));
  const reset = Number(response.headers.get('x-ratelimit-reset'));
  const retryAt =
    response.status === 429 && reset > 0 ? new Date(reset * 1000) : retryAfter > 0 ? new Date(Date.now() + retryAfter * 1000) : null;
  return new ApiFailure(response.status, error?.code ?? `HTTP_${response.status}`, error?.message ?? response.statusText ?? 'Request failed', error?.details ?? [], retryAt);
}

/** The failure to throw for a refused answer; a 401 (the key revoked or expired) signs out first. */
function refused(response: Response, body: unknown): ApiFailure {
  const failure = failureOf(response, body);
  if (failure.status === 401) session.expire(failure.message);
  return failure;
}

type Result<B> = { data?: B; error?: unknown; response: Response };

/**
 * The success body of an openapi-fetch call, or an ApiFailure. Endpoints that
 * can also answer CSV type their body as `string | JSON`; the dashboard asks
 * for JSON there (CSV downloads go through downloadCsv), so text is excluded.
 */
export async function unwrap<B>(call: Promise<Result<B>>): Promise<Exclude<B, string>> {
  let result: Result<B>;
  try {
    result = await call;
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiFailure(0, 'NETWORK_ERROR', 'The API cannot be reached. Check your connection, or whether linkroute is running.');
  }
  if (result.response.ok && result.data !== undefined && typeof result.data !== 'string') return result.data as Exclude<B, string>;
  throw refused(result.response, result.error);
}

/** A plain GET outside the typed paths (CSV downloads, QR images) with the key: its answer if 2xx, else an ApiFailure as unwrap throws. */
async function fetchOk(path: string, signal?: AbortSignal): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(path, { headers: { Authorization: `Bearer ${session.key() ?? ''}` }, ...(signal ? { signal } : {}) });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiFailure(0, 'NETWORK_ERROR', 'The API cannot be reached.');
  }
  noteRateLimit(response);
  if (response.ok) return response;
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    // Not JSON (a proxy's error page): failureOf reports the status alone.
    if (!(err instanceof SyntaxError)) throw err;
    body = undefined;
  }
  throw refused(response, body);
}

/** A GET's text (a CSV) and the file name the API suggests. */
export async function fetchText(path: string, signal?: AbortSignal): Promise<{ text: string; fileName: string | null }> {
  const response = await fetchOk(path, signal);
  return { text: await response.text(), fileName: attachmentName(response.headers.get('content-disposition')) };
}

/** A GET's bytes, typed as the API answered them (a QR code's image at its imageUrl). */
export async function fetchBlob(path: string, signal?: AbortSignal): Promise<Blob> {
  return (await fetchOk(path, signal)).blob();
}

/** `filename="..."` of a Content-Disposition: attachment (the API's names are plain ASCII), else null. */
function attachmentName(header: string | null): string | null {
  return header === null ? null : (/filename="([^"]+)"/.exec(header)?.[1] ?? null);
}

/** Downloads what a `format=csv` endpoint streams, under the API's own file name (what the range and dimension are). */
export async function downloadCsv(path: string, query: Record<string, string | undefined>): Promise<void> {
  const params = new URLSearchParams(Object.entries({ ...query, format: 'csv' }).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
  const { text, fileName } = await fetchText(`${path}?${params}`);
  const { download } = await import('./csv.ts');
  download(fileName ?? `${path.split('/').filter(Boolean).join('-')}-${new Date().toISOString().slice(0, 10)}.csv`, text);
}

export type Link = paths['/links/{id}']['get']['responses'][200]['content']['application/json']['data'];
export type Rule = paths['/rules/{id}']['get']['responses'][200]['content']['application/json']['data'];
export type Campaign = paths['/campaigns/{id}']['get']['responses'][200]['content']['application/json']['data'];
export type Domain = paths['/domains']['post']['responses'][201]['content']['application/json']['data'];
export type Overview = paths['/analytics']['get']['responses'][200]['content']['application/json']['data'];
export type ClickLogEntry = paths['/analytics/clicks']['get']['responses'][200]['content']['application/json']['data'][number];
export type ConversionEvent = NonNullable<NonNullable<paths['/analytics/conversions']['get']['parameters']['query']>['event']>;
export type ConversionReport = paths['/analytics/conversions']['get']['responses'][200]['content']['application/json']['data'];
export type BreakdownRow = paths['/analytics/breakdown']['get']['responses'][200]['content']['application/json']['data'][number];
export type Dimension = NonNullable<paths['/analytics/breakdown']['get']['parameters']['query']>['dimension'];
export type Realtime = paths['/analytics/realtime']['get']['responses'][200]['content']['application/json']['data'];
export type ExperimentReport = paths['/analytics/experiments/{linkId}']['get']['responses'][200]['content']['application/json']['data'];
export type Me = paths['/me']['get']['responses'][200]['content']['application/json']['data'];
export type LinkCreate = NonNullable<paths['/links']['post']['requestBody']>['content']['application/json'];
export type LinkUpdate = NonNullable<paths['/links/{id}']['patch']['requestBody']>['content']['application/json'];
export type RuleCreate = NonNullable<paths['/rules']['post']['requestBody']>['content']['application/json'];
export type QrCode = paths['/qr']['post']['responses'][201]['content']['application/json']['data'];
export type QrListItem = paths['/qr/{linkId}']['get']['responses'][200]['content']['application/json']['data'][number];
export type QrCreate = NonNullable<paths['/qr']['post']['requestBody']>['content']['application/json'];
export type Pagination = { page?: number; limit?: number; total?: number; totalPages?: number };
