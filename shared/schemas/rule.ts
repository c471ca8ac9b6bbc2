import { z } from 'zod';
import { appUrl, httpUrl, immutableField, isoTimestamp, paginationQuery, queryBoolean, someFieldToUpdate } from './common.ts';
import { conditionSchemas, ruleTypes, type RuleType } from './rule-conditions.ts';
import { documented } from './documented-as.ts';

const storedRuleFields = {
  id: z.string(),
  linkId: z.string().nullable(),
  campaignId: z.string(),
  name: z.string(),
  destinationUrl: z.string(),
  priority: z.number().int(),
  enabled: z.boolean(),
  deepLinkEnabled: z.boolean(),
  deepLinkIos: z.string().nullable(),
  deepLinkAndroid: z.string().nullable(),
  deepLinkFallbackUrl: z.string().nullable(),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
};

const storedVariant = <T extends RuleType>(type: T) => z.object({ ...storedRuleFields, type: z.literal(type), conditions: conditionSchemas[type] });

/** Spec 2.2, plus updatedAt on every read; conditions as stored (normalised) for the rule's type. */
export const ruleSchema = z
  .discriminatedUnion('type', [storedVariant('geo'), storedVariant('device'), storedVariant('time'), storedVariant('percentage')])
  .meta({ id: 'Rule' });
export type Rule = z.infer<typeof ruleSchema>;

const priority = z.number().int('must be a whole number').min(1, 'must be 1 to 100').max(100, 'must be 1 to 100');

const editableRuleFields = {
  name: z.string().max(200),
  destinationUrl: httpUrl,
  priority,
  enabled: z.boolean(),
  deepLinkEnabled: z.boolean(),
  deepLinkIos: appUrl.nullable(),
  deepLinkAndroid: appUrl.nullable(),
  deepLinkFallbackUrl: httpUrl.nullable(),
};

function createVariant<T extends RuleType>(type: T) {
  return z.strictObject({
    campaignId: z.string().min(1).max(100),
    linkId: z.string().min(1).max(100).nullable().default(null),
    name: editableRuleFields.name.default(''),
    type: z.literal(type),
    conditions: conditionSchemas[type],
    destinationUrl: editableRuleFields.destinationUrl,
    priority: priority.default(50),
    enabled: editableRuleFields.enabled.default(true),
    deepLinkEnabled: editableRuleFields.deepLinkEnabled.default(false),
    deepLinkIos: editableRuleFields.deepLinkIos.default(null),
    deepLinkAndroid: editableRuleFields.deepLinkAndroid.default(null),
    deepLinkFallbackUrl: editableRuleFields.deepLinkFallbackUrl.default(null),
  });
}

/** One variant per rule type, so conditions are validated by the schema of the given type. */
export const ruleCreateSchema = z
  .discriminatedUnion('type', [createVariant('geo'), createVariant('device'), createVariant('time'), createVariant('percentage')], {
    error: (issue) => (issue.code === 'invalid_union' ? `type must be one of ${ruleTypes.join(', ')}` : undefined),
  })
  .meta({ id: 'RuleCreate' });
export type RuleCreate = z.infer<typeof ruleCreateSchema>;

/**
 * Spec 4.3: type, linkId and campaignId are not updatable; saying so by name beats
 * a generic "unknown field". Conditions are checked against the stored rule's type.
 */
export const ruleUpdateSchema = z
  .strictObject({
    ...editableRuleFields,
    // Documented as the conditions of one of the types: the stored rule's decides which.
    conditions: documented(z.unknown(), z.union(ruleTypes.map((type) => conditionSchemas[type]))),
    type: immutableField('type'),
    linkId: immutableField('linkId'),
    campaignId: immutableField('campaignId'),
  })
  .partial()
  .refine(...someFieldToUpdate)
  .meta({ id: 'RuleUpdate' });
export type RuleUpdate = z.infer<typeof ruleUpdateSchema>;

export const ruleListQuerySchema = z.strictObject({
  ...paginationQuery,
  linkId: z.string().min(1).max(100).optional(),
  campaignId: z.string().min(1).max(100).optional(),
  type: z.enum(ruleTypes).optional(),
  enabled: queryBoolean.optional(),
});
