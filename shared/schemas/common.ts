import { z } from 'zod';
import { codeRunningSchemes, intentUrlProblem } from './intent-url.ts';
import { documented } from './documented-as.ts';

/**
 * A URL string that `accept`s the parsed URL. The URL parser silently drops tabs
 * and newlines and encodes spaces, so a value could validate and still carry
 * CR/LF into a Location header: such characters are refused outright.
 */
function urlString(accept: (url: URL) => boolean, message: string) {
  return z
    .string()
    .trim()
    .max(4096)
    .refine((value) => !/[\u0000-\u0020\u007f]/.test(value), 'must not contain spaces or control characters')
    .refine((value) => {
      const url = URL.parse(value);
      return url !== null && accept(url);
    }, message);
}

/** Only http(s) URLs are accepted anywhere a destination is (DESIGN.md "Destinations"). */
export const httpUrl = urlString((url) => (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname.length > 0, 'must be an absolute http(s) URL');

/**
 * App deep links (`myapp://path`, `intent://...`): any scheme except those that run code
 * in a browser, and for `intent:` URLs the same of each part (intent-url.ts).
 */
export const appUrl = urlString((url) => !codeRunningSchemes.has(url.protocol.slice(0, -1)), 'must be an app URL such as myapp://path').superRefine((value, ctx) => {
  const problem = intentUrlProblem(value);
  if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
});

export const isoTimestamp = z.iso.datetime({ offset: true, abort: true });

/**
 * The instants the stores hold, declared once for every date and timestamp a
 * client sends. Nothing is recorded before 1970 (clicks are stamped by the
 * redirector, and Unix time starts there); ClickHouse's DateTime64(3) ends with
 * 2299-12-31 (and starts in 1900), so anything that reaches the event tables
 * (a conversion's time, an analytics range) stays inside these; Postgres
 * timestamptz and JS Dates hold all four-digit years, which is what the ISO
 * syntax can write.
 */
export const timeBounds = {
  earliest: '1970-01-01T00:00:00.000Z',
  latestEvent: '2299-12-31T23:59:59.999Z',
  latestStored: '9999-12-31T23:59:59.999Z',
} as const;

/** timeBounds' event range as epoch milliseconds: the `ts` of every event on the bus (click-event.ts, conversion.ts). */
export const eventEpochMs = { min: Date.parse(timeBounds.earliest), max: Date.parse(timeBounds.latestEvent) } as const;

/**
 * A timestamp a client sends, as an instant between `min` and `max` (UTC): the syntax
 * allows years 0000-9999 with any offset, which can name instants a store refuses
 * with a 500 (postgres.js writes through a JS Date, ClickHouse DateTime64 ends in 2299).
 */
function timestampBetween(min: string, max: string) {
  const [low, high] = [Date.parse(min), Date.parse(max)];
  return isoTimestamp.refine((value) => {
    const at = Date.parse(value);
    return at >= low && at <= high;
  }, `must be between ${min} and ${max}`);
}

/** Stored in Postgres (e.g. expiresAt). */
export const storedTimestamp = timestampBetween(timeBounds.earliest, timeBounds.latestStored);
/** Stored with events in ClickHouse (e.g. a conversion's time). */
export const eventTimestamp = timestampBetween(timeBounds.earliest, timeBounds.latestEvent);

/**
 * `YYYY-MM-DD` that names a real calendar day (2026-02-30 is refused, not rolled
 * over) on which events can exist: an analytics range is queried from the day
 * before `from` to the days after `to` (zones, the attribution window), all of
 * which ClickHouse must parse.
 */
export const eventDay = (() => {
  const [first, last] = [timeBounds.earliest.slice(0, 10), timeBounds.latestEvent.slice(0, 10)];
  return z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/, { message: 'must be a date as YYYY-MM-DD', abort: true })
    .refine((value) => {
      const ms = Date.parse(`${value}T00:00:00Z`);
      return Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 10) === value;
    }, { message: 'must be a real calendar date', abort: true })
    .refine((value) => value >= first && value <= last, `must be a date from ${first} to ${last}`);
})();

/**
 * One end of an analytics range: a date (`YYYY-MM-DD`, a day in the report's zone)
 * or an instant with its offset (`2026-11-27T13:00:00Z`), for ranges that are not
 * whole days, such as the last 24 hours. The two forms are told apart by length.
 */
export const rangeBound = documented(
  z.string().superRefine((value, ctx) => {
    const form = /^\d{4}-\d{2}-\d{2}$/.test(value) ? eventDay : value.length > 10 && value[10] === 'T' ? eventTimestamp : null;
    const checked = form?.safeParse(value);
    if (checked?.success) return;
    for (const issue of checked?.error.issues ?? [{ code: 'invalid_format' }]) {
      const message = issue.code === 'invalid_format' ? 'must be a date as YYYY-MM-DD or an instant with its offset, e.g. 2026-11-27T13:00:00Z' : issue.message;
      ctx.addIssue({ code: 'custom', message });
    }
  }),
  z.string().meta({
    description: 'A date (YYYY-MM-DD: a whole day in `timezone`) or an instant with its offset (ISO 8601, e.g. 2026-11-27T13:00:00Z: `to` exclusive; reports count whole UTC hours, `from` rounded down and `to` up to the hour, while the click log takes instants as given). A report takes both ends in the same form.',
    examples: ['2026-11-01', '2026-11-27T13:00:00Z'],
  }),
);

/** Query-string booleans arrive as text; anything but the two words is a client error. */
export const queryBoolean = documented(
  z.enum(['true', 'false']).transform((v) => v === 'true'),
  z.boolean(),
);

/**
 * A whole number in a query string: digits only (no sign, exponent or spaces), then
 * checked as a number; `fallback` when absent. Documented as an integer.
 */
export function queryInteger(min: number, max: number, fallback: number) {
  const range = `must be ${min} to ${max}`;
  return documented(
    z
      .string()
      .regex(/^\d+$/, 'must be a whole number')
      // More digits than `max` has: out of range whatever it says (and Number() might round it).
      .transform((digits) => (digits.length > String(max).length ? Number.MAX_SAFE_INTEGER : Number(digits)))
      .pipe(z.number().min(min, range).max(max, range))
      .default(fallback as never),
    z.number().int().min(min).max(max).default(fallback),
  );
}

/**
 * A list parameter a client may also repeat, as Dub's API and most HTTP clients send
 * arrays: `?p=a,b&p=c` means `?p=a,b,c` (any of them). Each occurrence is checked by
 * `occurrence` and split by `split` on its own (an escape never runs across two
 * occurrences), then the values are concatenated. Every other query parameter given
 * twice stays a 400 (see parseInput). Documented as either form (a string, or an
 * array sent as repeated parameters, OpenAPI's default `form` style), so a generated
 * client can pass an array; the description should mention the repeat (`repeatableNote`).
 */
export function repeatableQueryList(split: (raw: string) => string[], occurrence: z.ZodType<string, string> = z.string()) {
  return documented(
    z.union([occurrence, z.array(occurrence).min(1)]).transform((raw) => (typeof raw === 'string' ? [raw] : raw).flatMap(split)),
    z.union([z.string(), z.array(z.string()).min(1)]),
  );
}

/** For the description of a repeatableQueryList parameter `name`. */
export const repeatableNote = (name: string, a = 'a', b = 'b') => `The parameter may be repeated: ${name}=${a}&${name}=${b} is ${name}=${a},${b}.`;

/**
 * An update must change something. Checked only when nothing else is wrong, so a body of
 * unknown or immutable fields gets its one reason rather than this one beside it.
 */
export const someFieldToUpdate = [
  (body: object) => Object.keys(body).length > 0,
  { error: 'must contain at least one field to update', when: (payload: { issues: readonly unknown[] }) => payload.issues.length === 0 },
] as const;

/** A field an update may not carry: saying so by name beats a generic "unknown field". */
export const immutableField = (what: string) => z.never({ error: `${what} cannot be changed after creation` }).optional();

export const paginationQuery = {
  page: queryInteger(1, 1_000_000, 1),
  limit: queryInteger(1, 100, 20),
};

/** Beside `data` in every list answer. */
export const paginationSchema = z
  .object({ page: z.number().int(), limit: z.number().int(), total: z.number().int(), totalPages: z.number().int() })
  .meta({ id: 'Pagination' });
export type Pagination = z.infer<typeof paginationSchema>;

/** The answer to a DELETE of one item. */
export const deletedSchema = z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'Deleted' });

export function pagination(page: number, limit: number, total: number): Pagination {
  return { page, limit, total, totalPages: Math.ceil(total / limit) };
}

export const plans = ['starter', 'pro', 'enterprise'] as const;
export type Plan = (typeof plans)[number];

export const scopes = [
  'links:read',
  'links:write',
  'rules:write',
  'campaigns:write',
  'analytics:read',
  'conversions:write',
  'domains:write',
  'qr:write',
  /** Managing webhook endpoints and reading their deliveries (they name URLs and secrets). */
  'webhooks:write',
] as const;
export type Scope = (typeof scopes)[number];
