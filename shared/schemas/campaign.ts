import { z } from 'zod';
import { isoTimestamp, paginationQuery, someFieldToUpdate } from './common.ts';

export const campaignStatuses = ['active', 'paused', 'archived'] as const;

export const campaignSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  status: z.enum(campaignStatuses),
  isDefault: z.boolean(),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
})
  .meta({ id: 'Campaign' });
export type Campaign = z.infer<typeof campaignSchema>;

const name = z.string().trim().min(1, 'must not be empty').max(200);
const description = z.string().max(2000);

export const campaignCreateSchema = z.strictObject({
  name,
  description: description.default(''),
  status: z.enum(campaignStatuses).default('active'),
})
  .meta({ id: 'CampaignCreate' });
export type CampaignCreate = z.infer<typeof campaignCreateSchema>;

export const campaignUpdateSchema = z
  .strictObject({
    name: name.optional(),
    description: description.optional(),
    status: z.enum(campaignStatuses).optional(),
  })
  .refine(...someFieldToUpdate)
  .meta({ id: 'CampaignUpdate' });
export type CampaignUpdate = z.infer<typeof campaignUpdateSchema>;

export const campaignListQuerySchema = z.strictObject({
  ...paginationQuery,
  status: z.enum(campaignStatuses).optional(),
});
