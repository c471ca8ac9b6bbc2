import { z } from 'zod';
import { isoTimestamp, plans, scopes } from './common.ts';

/**
 * `GET /me`: the workspace a key belongs to and what the key may do, so a client
 * (the dashboard) can greet the user and hide what the key cannot reach. The
 * rate-limit state travels in the X-RateLimit-* headers, as on every response.
 */
export const meSchema = z.strictObject({
  workspace: z.strictObject({ id: z.string(), name: z.string(), plan: z.enum(plans) }),
  key: z.strictObject({ id: z.string(), name: z.string(), prefix: z.string(), scopes: z.array(z.enum(scopes)), createdAt: isoTimestamp }),
})
  .meta({ id: 'Me' });
export type Me = z.infer<typeof meSchema>;
