import { CodedError } from '../coded-error.ts';

/**
 * A compacted snapshot blob whose bytes are not a whole snapshot: cut short, or
 * damaged (the frames or an index do not parse, or hold fewer entries than its
 * metadata says). A redirector then replays the snapshot bucket instead.
 * Infrastructure, not an AppError.
 */
export type SnapshotBlobErrorCode = 'SNAPSHOT_BLOB_TRUNCATED' | 'SNAPSHOT_BLOB_CORRUPT';

export class SnapshotBlobError extends CodedError<SnapshotBlobErrorCode> {}
