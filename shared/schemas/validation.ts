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

/**
 * A query parameter given twice arrives as an array. Only list parameters take that
 * (repeatableQueryList in common.ts); for the others the answer says what happened
 * rather than "expected string, received array".
 */
function repeatedParameters(error: z.ZodError, query: Record<string, unknown>): ErrorDetail[] {
  return zodDetails(error).map((detail, i) => {
    const issue = error.issues[i]!;
    const given = issue.path.length === 1 ? query[String(issue.path[0])] : undefined;
    return (issue.code === 'invalid_type' || issue.code === 'invalid_value') && Array.isArray(given) ? { path: detail.path, message: 'given more than once; this parameter takes one value' } : detail;
  });
}

/** Parses with a zod schema; failure is a VALIDATION_ERROR naming every bad field. */
export function parseInput<T extends z.ZodType>(schema: T, input: unknown, what = 'request'): z.output<T> {
  const result = schema.safeParse(input);
  if (!result.success) {
    const details = what === 'query' && typeof input === 'object' && input !== null ? repeatedParameters(result.error, input as Record<string, unknown>) : zodDetails(result.error);
    throw new AppError('VALIDATION_ERROR', `Invalid ${what}`, details);
  }
  return result.data;
}
