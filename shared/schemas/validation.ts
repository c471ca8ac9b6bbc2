import type { z } from 'zod';
import { AppError, type ErrorDetail } from '../errors.ts';

export function zodDetails(error: z.ZodError): ErrorDetail[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    // Unknown keys are reported on the parent; name each key so clients can fix them.
    if (issue.code === 'unrecognized_keys') {
      const keys = (issue as { keys: string[] }).keys;
      return { path: keys.map((k) => (path ? `${path}.${k}` : k)).join(', '), message: `unknown field${keys.length > 1 ? 's' : ''}` };
    }
    return { path: path || '(root)', message: issue.message };
  });
}

/** Parses with a zod schema; failure is a VALIDATION_ERROR naming every bad field. */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown, what = 'request'): z.output<T> {
  const result = schema.safeParse(input);
  if (!result.success) {
    throw new AppError('VALIDATION_ERROR', `Invalid ${what}`, zodDetails(result.error));
  }
  return result.data;
}
