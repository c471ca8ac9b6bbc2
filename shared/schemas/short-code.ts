import { z } from 'zod';

/**
 * Paths the redirect domain (or the product) uses itself. A link may never
 * shadow them, whatever the case, because the redirector matches them first.
 */
export const reservedShortCodes: ReadonlySet<string> = new Set([
  'api', 'admin', 'app', 'assets', 'dashboard', 'docs', 'favicon.ico', 'health', 'help', 'login', 'logout',
  'metrics', 'openapi', 'openapi.json', 'p.gif', 'qr', 'ready', 'robots.txt', 'settings', 'signup', 'static',
  'status', 'support', 'www', 'links', 'rules', 'campaigns', 'conversions', 'domains', 'analytics',
  // API paths where a short code may stand in for a link id: /links/bulk.
  'bulk', 'tags', 'webhooks',
]);

export const GENERATED_SHORT_CODE_LENGTH = 7;

export const customShortCode = z
  .string()
  .min(3, 'must be 3 to 64 characters')
  .max(64, 'must be 3 to 64 characters')
  .regex(/^[A-Za-z0-9][A-Za-z0-9_-]*$/, 'may contain only letters, digits, "-" and "_", starting with a letter or digit')
  .refine((code) => !code.toLowerCase().startsWith('link_'), 'may not start with "link_" (reserved for link ids)')
  .refine((code) => !reservedShortCodes.has(code.toLowerCase()), 'is a reserved word');
