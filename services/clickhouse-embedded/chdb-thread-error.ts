import { CodedError } from '../../shared/coded-error.ts';

/**
 * The chDB engine thread itself failed, as opposed to a statement (that is a
 * ClickHouseException with the engine's code): a stable code per condition.
 * Every call after such an error fails with it too.
 */
export type ChdbThreadErrorCode =
  /** chDB could not open its data directory (in use by another process, unreadable). */
  | 'CHDB_OPEN_FAILED'
  /** The worker thread threw outside any call. */
  | 'CHDB_THREAD_FAILED'
  /** The worker thread ended. */
  | 'CHDB_THREAD_EXITED';

export class ChdbThreadError extends CodedError<ChdbThreadErrorCode> {}
