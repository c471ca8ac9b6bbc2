import { z } from 'zod';
import { isoTimestamp, paginationQuery } from './common.ts';

const HOSTNAME_MESSAGE =
  'must be a hostname such as go.example.com (letters, digits and hyphens, or an internationalised name such as bücher.de; no port, no scheme)';

/**
 * A name as browsers' Host headers and DNS carry it, through the WHATWG URL host parser:
 * lowercase, an internationalised name in IDNA form (bücher.de -> xn--bcher-kva.de;
 * fullwidth letters and ideographic full stops folded), a name a browser reads as an IPv4
 * address in that form (0x7f.0x1 -> 127.0.0.1, which the checks then refuse). Null when
 * it is no host there (invalid punycode such as xn--zz, forbidden characters) or carries
 * URL syntax (a port, a path, credentials).
 */
function hostOf(h: string): string | null {
  if (/[\s/?#@:[\]\\%]/.test(h)) return null;
  const host = URL.parse(`http://${h}/`)?.hostname;
  return host === undefined || host === '' ? null : host.replace(/\.$/, '');
}

/**
 * A hostname we can route by Host: lowercase DNS labels, at least two, no port,
 * no IP address, within DNS length limits, not a local name.
 */
export const hostname = z
  .string()
  .trim()
  .transform((h, ctx) => {
    const host = hostOf(h);
    if (host === null) ctx.addIssue({ code: 'custom', message: HOSTNAME_MESSAGE });
    return host ?? h;
  })
  .refine((h) => h.length >= 4 && h.length <= 253, 'must be 4 to 253 characters')
  .refine((h) => h.split('.').length >= 2 && h.split('.').every((label) => /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/.test(label)), HOSTNAME_MESSAGE)
  .refine((h) => !/^\d+(\.\d+){3}$/.test(h), 'must be a hostname, not an IP address')
  .refine((h) => !/^[0-9]+$/.test(h.split('.').at(-1)!), 'must end in a top-level domain')
  .refine((h) => !/(^|\.)localhost$/.test(h) && h !== 'localhost.localdomain', 'must be a public hostname, not localhost');

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
  /** The last DNS check: a verify request, or the daily re-check of a verified domain. */
  checkedAt: isoTimestamp.nullable(),
  /**
   * A verified domain whose TXT record the re-checks have not found since then (null
   * while it is found): after the grace period (7 days by default) it turns `failed`.
   */
  failingSince: isoTimestamp.nullable(),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
})
  .meta({ id: 'Domain' });
export type Domain = z.infer<typeof domainSchema>;

export const domainCreateSchema = z.strictObject({ hostname }).meta({ id: 'DomainCreate' });

export const domainListQuerySchema = z.strictObject({ ...paginationQuery, status: z.enum(domainStatuses).optional() });

export const VERIFICATION_PREFIX = '_linkroute.';
