import { CodedError } from '../coded-error.ts';

/**
 * A blob that could not be read whole and intact from a BlobStore: the caller falls
 * back to another source (the redirector replays the snapshot bucket). Infrastructure,
 * not an AppError.
 */
export type BlobReadErrorCode =
  /** The blob names a digest algorithm this code does not check. */
  | 'BLOB_DIGEST_UNKNOWN'
  /** Chunks went missing during the read: the blob was replaced and its old chunks purged. */
  | 'BLOB_CHUNKS_MISSING'
  /** Every chunk read, but their digest is not the blob's: damaged. */
  | 'BLOB_DIGEST_MISMATCH';

export class BlobReadError extends CodedError<BlobReadErrorCode> {}
