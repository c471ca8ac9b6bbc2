import { z } from 'zod';
import { errorStatus, type ErrorCode } from '../errors.ts';

const codes = Object.keys(errorStatus) as [ErrorCode, ...ErrorCode[]];

/** An AppError as a client sees it (AppError.toJSON): a stable code, a message, and the fields at fault. */
export const apiErrorSchema = z
  .object({
    code: z.enum(codes),
    message: z.string(),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .meta({ id: 'ApiError' });

/** Every failure's body (services/api/middleware/error-handler.ts). */
export const errorEnvelopeSchema = z.object({ success: z.literal(false), error: apiErrorSchema }).meta({ id: 'Error' });
