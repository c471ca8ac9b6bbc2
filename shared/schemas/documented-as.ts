import { z } from 'zod';

/**
 * Where the schema a route validates with is not the one a client should read:
 * - a query integer arrives as text and is validated as digits, but a client sends
 *   a number (and a generated client should take one);
 * - PATCH /rules/{id} conditions are checked against the stored rule's type, after
 *   the body, so the body schema takes any value; a client sends one type's conditions.
 * The OpenAPI document shows the registered schema in place of the validating one.
 * Both stay zod, next to each other, so they cannot drift apart unseen.
 */
const registry = new WeakMap<object, z.ZodType>();

/** Registers `documentation` for `validated` and returns `validated`. */
export function documented<T extends z.ZodType>(validated: T, documentation: z.ZodType): T {
  registry.set(validated, documentation);
  return validated;
}

/** The schema documented in place of `schema`, if any. */
export function documentationOf(schema: object): z.ZodType | undefined {
  return registry.get(schema);
}
