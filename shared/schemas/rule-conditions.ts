/**
 * Rule conditions by rule type (SPEC 2.3, DESIGN "Rule conditions").
 *
 * One strict zod schema per type. Adding a type (referrer, utm, language, query, ...)
 * means: add its name to `ruleTypes`, its schema to `conditionSchemas`, and a matcher
 * to `shared/routing/matchers/registry.ts`; the compiler enforces the last two through
 * `Record<RuleType, ...>`.
 */
import countries from 'i18n-iso-countries';
import { z } from 'zod';

export const ruleTypes = ['geo', 'device', 'time', 'percentage'] as const;
export type RuleType = (typeof ruleTypes)[number];

export const deviceClasses = ['mobile', 'tablet', 'desktop'] as const;
export type DeviceClass = (typeof deviceClasses)[number];

export const operatingSystems = ['ios', 'android', 'windows', 'macos', 'linux'] as const;
export type OperatingSystem = (typeof operatingSystems)[number];

/** Index 0 is monday: the time matcher uses these indexes as bit positions. */
export const weekdays = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;
export type Weekday = (typeof weekdays)[number];

// --- geo -----------------------------------------------------------------------------

/**
 * i18n-iso-countries' isValid also accepts alpha-3 and numeric codes ('USA', '840'),
 * so the two-letter shape is checked first. Lowercase input is accepted and stored
 * uppercase, which is what the IP database returns (an overwrite, not a transform,
 * so the stored form is still a documented string).
 */
const countryCode = z
  .string()
  .regex(/^[A-Za-z]{2}$/, { message: 'must be an ISO 3166-1 alpha-2 country code', abort: true })
  .toUpperCase()
  .refine((code) => countries.isValid(code), 'unknown ISO 3166-1 alpha-2 country code');

export const geoConditionsSchema = z
  .object({
    countries: z.array(countryCode).min(1, 'at least one country is required'),
    operator: z.enum(['in', 'not_in']).default('in'),
  })
  .strict()
  .meta({ id: 'GeoConditions' });
export type GeoConditions = z.output<typeof geoConditionsSchema>;

// --- device --------------------------------------------------------------------------

export const deviceConditionsSchema = z
  .object({
    devices: z.array(z.enum(deviceClasses)).min(1, 'devices must not be empty when given').optional(),
    os: z.array(z.enum(operatingSystems)).min(1, 'os must not be empty when given').optional(),
  })
  .strict()
  .refine((c) => c.devices !== undefined || c.os !== undefined, {
    message: 'at least one of devices or os is required',
  })
  .meta({ id: 'DeviceConditions' });
export type DeviceConditions = z.output<typeof deviceConditionsSchema>;

// --- time ----------------------------------------------------------------------------

const validTimeZones = new Set<string>();

/**
 * IANA zone check through the runtime's own ICU data, the same data the time matcher
 * evaluates with. Only valid names are cached: the set of valid zones is finite, while
 * caching rejected input would let clients grow the cache without bound.
 */
export function isValidTimeZone(timeZone: string): boolean {
  if (validTimeZones.has(timeZone)) return true;
  if (timeZone.length === 0 || timeZone.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone });
  } catch (err) {
    if (err instanceof RangeError) return false; // not a time zone Intl knows
    throw err;
  }
  validTimeZones.add(timeZone);
  return true;
}

const clockTime = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'must be HH:MM between 00:00 and 23:59');
/** The end is exclusive, so `24:00` (the end of the day, as in ISO 8601) is what lets a window take a day's last minute. */
const endClockTime = z.string().regex(/^(([01]\d|2[0-3]):[0-5]\d|24:00)$/, 'must be HH:MM between 00:00 and 24:00 (exclusive: 24:00 is the end of the day)');

export const timeConditionsSchema = z
  .object({
    timezone: z.string().refine(isValidTimeZone, 'must be an IANA time zone name, e.g. Europe/Berlin'),
    days: z
      .array(z.enum(weekdays))
      .min(1, 'at least one day is required')
      .refine((days) => new Set(days).size === days.length, 'days must not repeat'),
    startTime: clockTime,
    endTime: endClockTime,
  })
  .strict()
  .refine((c) => c.startTime !== c.endTime, {
    message: 'startTime and endTime must differ (an empty window would never match)',
    path: ['endTime'],
  })
  .meta({ id: 'TimeConditions' });
export type TimeConditions = z.output<typeof timeConditionsSchema>;

// --- percentage ----------------------------------------------------------------------

export const percentageConditionsSchema = z
  .object({
    percentage: z.number().min(0, 'must be between 0 and 100').max(100, 'must be between 0 and 100'),
  })
  .strict()
  .meta({ id: 'PercentageConditions' });
export type PercentageConditions = z.output<typeof percentageConditionsSchema>;

// --- registry ------------------------------------------------------------------------

export const conditionSchemas = {
  geo: geoConditionsSchema,
  device: deviceConditionsSchema,
  time: timeConditionsSchema,
  percentage: percentageConditionsSchema,
} satisfies Record<RuleType, z.ZodType>;

/** Validated (output) conditions for each type; what the API stores and the engine compiles. */
export interface ConditionsByType {
  geo: GeoConditions;
  device: DeviceConditions;
  time: TimeConditions;
  percentage: PercentageConditions;
}

/** The same schemas, typed so that indexing with a generic RuleType keeps the output type. */
const typedSchemas: { [K in RuleType]: z.ZodType<ConditionsByType[K]> } = conditionSchemas;

export function isRuleType(value: unknown): value is RuleType {
  return typeof value === 'string' && (ruleTypes as readonly string[]).includes(value);
}

/**
 * Validates and normalises conditions for a rule type. Returns zod's safeParse result;
 * on success `data` is the normalised form to store (uppercase countries, defaulted
 * operator).
 */
export function parseConditions<T extends RuleType>(
  type: T,
  input: unknown,
): z.ZodSafeParseResult<ConditionsByType[T]> {
  return typedSchemas[type].safeParse(input);
}
