import { z } from 'zod';
import { isoTimestamp, paginationQuery } from './common.ts';

/**
 * An internationalised name (bücher.de) as DNS and browsers' Host headers carry it
 * (xn--bcher-kva.de, IDNA via the WHATWG URL parser); anything else as given. Only a
 * bare name is converted: one with URL syntax in it is left for the checks to refuse.
 */
function asciiHostname(h: string): string {
  if (!/[^\x00-\x7f]/.test(h) || /[\s/?#@:[\]\\%]/.test(h)) return h;
  return URL.parse(`http://${h}/`)?.hostname ?? h;
}

/**
 * A hostname we can route by Host: lowercase DNS labels, at least two, no port,
 * no IP address, within DNS length limits.
 */
export const hostname = z
  .string()
  .trim()
  .transform((h) => asciiHostname(h).toLowerCase().replace(/\.$/, ''))
  .refine((h) => h.length >= 4 && h.length <= 253, 'must be 4 to 253 characters')
  .refine(
    (h) => h.split('.').length >= 2 && h.split('.').every((label) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(label)),
    'must be a hostname such as go.example.com (letters, digits and hyphens, or an internationalised name such as bücher.de; no port, no scheme)',
  )
  .refine((h) => !/^\d+(\.\d+){3}$/.test(h), 'must be a hostname, not an IP address')
  .refine((h) => !/^[0-9]+$/.test(h.split('.').at(-1)!), 'must end in a top-level domain');

export const domainStatuses = ['pending', 'verified', 'failed'] as const;

export const domainRoutingSchema = z.object({
  type: z.enum(['CNAME', 'A', 'AAAA']),
  /** The custom hostname itself. */
  name: z.string(),
  value: z.string(),
});
export type DomainRouting = z.infer<typeof domainRoutingSchema>;

export const domainSchema = z.object({
  id: z.string(),
  hostname: z.string(),
  status: z.enum(domainStatuses),
  /** Publish this TXT record, then POST /domains/{id}/verify. */
  verification: z.object({ type: z.literal('TXT'), name: z.string(), value: z.string() }),
  /**
   * Publish this record too, so visitors reach the redirectors: a CNAME to the default
   * redirect domain's host (A or AAAA when that is an address); null when the default
   * domain is local (localhost, loopback), with nothing public to point at.
   */
  routing: domainRoutingSchema.nullable(),
  /**
   * Why the domain is `failed`: what DNS answered, or `<hostname> was verified by another
   * workspace` (the first workspace to verify a hostname owns it). null otherwise.
   */
  failureReason: z.string().nullable(),
  verifiedAt: isoTimestamp.nullable(),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
})
  .meta({ id: 'Domain' });
export type Domain = z.infer<typeof domainSchema>;

export const domainCreateSchema = z.strictObject({ hostname }).meta({ id: 'DomainCreate' });

export const domainListQuerySchema = z.strictObject({ ...paginationQuery, status: z.enum(domainStatuses).optional() });

export const VERIFICATION_PREFIX = '_linkroute.';
