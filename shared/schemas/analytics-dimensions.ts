import { z } from 'zod';
import { recordedOperatingSystems } from './operating-systems.ts';
import { deviceClasses } from './rule-conditions.ts';
import { tagName } from './tag.ts';
import { LITERAL_NONE, NONE, spellFilterValue, splitFilterValues } from './filter-values.ts';
import { repeatableNote, repeatableQueryList } from './common.ts';

/**
 * The dimensions analytics can break clicks down by (GET /analytics/breakdown
 * ?dimension=) and filter every analytics endpoint by (a query parameter of the
 * same name). This file is the one declaration of their names and of the format
 * of a filter value; services/api/analytics/dimensions.ts says where each is
 * read and how its values are labelled.
 *
 * Filter syntax: `?country=DE,AT&os=ios`: values of one dimension are
 * comma-separated and OR-ed, dimensions are AND-ed. `(none)` stands for the empty
 * value (no referrer, no UTM field), the row a breakdown labels "(none)".
 */
export { NONE };

export interface DimensionDeclaration {
  /**
   * Format of one filter value, as the breakdown returns it in `value`, checked once the value
   * is spelled as the API spells it (spellFilterValue: `de` is `DE`); failures name the parameter.
   */
  value: z.ZodType<string, string>;
  /** Whether a click can lack this value (then `(none)` filters for it). */
  canBeEmpty: boolean;
  description: string;
}

/** One of a fixed list of lowercase values (given in any case: spellFilterValue lowercases them). */
function oneOf(values: readonly [string, ...string[]]): z.ZodType<string, string> {
  return z.enum(values, { error: `must be one of ${values.join(', ')}` });
}

// Values as clicks store them: a visitor's utm_term may hold a tab (decoded from %09), and
// its breakdown row must filter as any other. NUL alone is refused (no URL carries one).
const text = (max: number) => z.string().min(1).max(max).refine((v) => !v.includes('\u0000'), 'must not contain NUL');
const id = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[A-Za-z0-9]{1,64}$`), `must be an id starting with ${prefix}_`);

export const dimensions = {
  country: {
    value: z.string().regex(/^[A-Z]{2}$/, 'must be a two-letter country code (ISO 3166-1 alpha-2)'),
    canBeEmpty: true,
    description: 'country of the visitor, ISO 3166-1 alpha-2 (from the geo-IP database)',
  },
  region: { value: text(200), canBeEmpty: true, description: 'region (state, province) of the visitor, as the geo-IP data names it' },
  city: { value: text(200), canBeEmpty: true, description: 'city of the visitor, as the geo-IP data names it' },
  device: { value: oneOf(deviceClasses), canBeEmpty: false, description: 'device class' },
  os: {
    value: oneOf(recordedOperatingSystems),
    canBeEmpty: true,
    description: 'operating system (rows carry its name); `other`: one the user agent names that is none of the listed; `(none)`: it names none',
  },
  browser: { value: text(100), canBeEmpty: true, description: 'browser name, as the user agent parser names it (Chrome, Safari, ...)' },
  referrer: {
    // As URL parsing leaves a referring page's host: also `_` (android-app://com.my_app/),
    // an IPv6 address in brackets, and an opaque host's other printable characters.
    value: z.string().max(253).regex(/^[\x21-\x7e]+$/, 'must be a host name, e.g. news.example.com'),
    canBeEmpty: true,
    description: 'host of the referring page',
  },
  utm_source: { value: text(500), canBeEmpty: true, description: 'utm_source the landing page received (the destination\'s, or the visitor\'s where the destination has none or the link lets the visitor override it)' },
  utm_medium: { value: text(500), canBeEmpty: true, description: 'utm_medium' },
  utm_campaign: { value: text(500), canBeEmpty: true, description: 'utm_campaign' },
  utm_term: { value: text(500), canBeEmpty: true, description: 'utm_term' },
  utm_content: { value: text(500), canBeEmpty: true, description: 'utm_content' },
  source: { value: oneOf(['link', 'qr']), canBeEmpty: false, description: '`qr` for QR code scans, `link` for other clicks' },
  link: { value: id('link'), canBeEmpty: false, description: 'link id (rows carry the short code)' },
  campaign: { value: id('campaign'), canBeEmpty: false, description: 'campaign id (rows carry the campaign name)' },
  rule: {
    value: z.union([z.literal('default'), id('rule')], { error: 'must be a rule id or default' }),
    canBeEmpty: false,
    description: 'the routing rule that decided the destination (rows carry its name and type); `default`: no rule matched',
  },
  destination: { value: text(4096), canBeEmpty: true, description: 'URL the visitor was sent to; `(none)`: clicks sent nowhere (a link whose redirectBehavior is `never` answers 204)' },
  tag: {
    // Spelled as links store tags (tagNormalForm), so `Summer Sale` filters the tag `summer sale`.
    value: tagName,
    canBeEmpty: true,
    description:
      "tag of the clicked link, as the link is tagged now (a click of a link tagged a and b counts under each in a breakdown); `(none)`: links without tags",
  },
} satisfies Record<string, DimensionDeclaration>;

export type Dimension = keyof typeof dimensions;
export const dimensionNames = Object.keys(dimensions) as Dimension[];

/** Values of one dimension a filter keeps; null is the empty value. */
export type DimensionFilters = Partial<Record<Dimension, Array<string | null>>>;

const MAX_VALUES = 100;

/** One filter parameter: comma-separated values, each checked against the dimension's format. */
function filterParameter(name: Dimension) {
  const declaration: DimensionDeclaration = dimensions[name];
  return repeatableQueryList(splitFilterValues)
    .transform((parts, ctx): Array<string | null> => {
      if (parts.length > MAX_VALUES) {
        ctx.addIssue({ code: 'custom', message: `at most ${MAX_VALUES} values` });
        return z.NEVER;
      }
      const out: Array<string | null> = [];
      for (const part of parts) {
        if (part === NONE && declaration.canBeEmpty) {
          out.push(null);
          continue;
        }
        if (part === '') {
          ctx.addIssue({ code: 'custom', message: `has an empty value${declaration.canBeEmpty ? `; ${NONE} selects clicks without one` : ''}` });
          return z.NEVER;
        }
        // `\(none)` is the text "(none)" itself, checked as any value of the dimension.
        const parsed = declaration.value.safeParse(part === LITERAL_NONE ? NONE : spellFilterValue(name, part));
        if (!parsed.success) {
          ctx.addIssue({ code: 'custom', message: `${JSON.stringify(part.slice(0, 100))} ${parsed.error.issues[0]?.message ?? 'is not valid'}` });
          return z.NEVER;
        }
        out.push(parsed.data);
      }
      return [...new Set(out)];
    })
    .optional()
    .describe(`Filter: ${declaration.description}. Comma-separated values match any of them (a backslash escapes a comma or a backslash within a value: a\\,b)${declaration.canBeEmpty ? `; ${NONE} matches clicks without one, ${LITERAL_NONE} a value that is the text ${NONE} itself` : ''}. ${repeatableNote(name)}`);
}

/** Every dimension as an optional filter parameter, for the analytics query schemas. */
export const dimensionFilterFields = Object.fromEntries(dimensionNames.map((name) => [name, filterParameter(name)])) as {
  [K in Dimension]: ReturnType<typeof filterParameter>;
};

/** The dimension filters of a parsed query (the parameters named after dimensions), without the other fields. */
export function dimensionFiltersOf(query: Partial<Record<string, unknown>>): DimensionFilters {
  const out: DimensionFilters = {};
  for (const name of dimensionNames) {
    const values = query[name];
    if (Array.isArray(values)) out[name] = values as Array<string | null>;
  }
  return out;
}
