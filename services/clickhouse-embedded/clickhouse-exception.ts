/**
 * ClickHouse's error shape on the HTTP interface, so @clickhouse/client turns
 * our failures into its ClickHouseError with the real `code` and `type`:
 * status from the exception code (as ClickHouse's exceptionCodeToHTTPStatus),
 * header `X-ClickHouse-Exception-Code: <n>`, body
 * `Code: <n>. DB::Exception: <message>. (<NAME>)`.
 */
export class ClickHouseException extends Error {
  readonly code: number;
  readonly type: string;

  constructor(code: number, type: string, message: string) {
    super(message);
    this.name = 'ClickHouseException';
    this.code = code;
    this.type = type;
  }

  /** The response body; chDB's own messages already carry the `Code: ...` form and pass through verbatim. */
  get body(): string {
    const text = this.message.startsWith('Code: ')
      ? this.message
      : `Code: ${this.code}. DB::Exception: ${this.message.replace(/\.$/, '')}. (${this.type})`;
    return text.endsWith('\n') ? text : `${text}\n`;
  }

  get httpStatus(): number {
    return statusByType.get(this.type) ?? 500;
  }
}

/** The codes this endpoint raises itself (values from ClickHouse's ErrorCodes). */
export const errorCodes = {
  UNSUPPORTED_METHOD: 1,
  NOT_IMPLEMENTED: 48,
  SYNTAX_ERROR: 62,
  QUERY_IS_TOO_LARGE: 229,
  ABORTED: 236,
  CANNOT_DECOMPRESS: 271,
  AUTHENTICATION_FAILED: 516,
  QUERY_WAS_CANCELLED: 394,
  UNSUPPORTED_MEDIA_TYPE: 779,
  STD_EXCEPTION: 1001,
} as const;

export type OwnErrorType = keyof typeof errorCodes;

export function clickHouseException(type: OwnErrorType, message: string): ClickHouseException {
  return new ClickHouseException(errorCodes[type], type, message);
}

/**
 * An error chDB raised, e.g. `Code: 60. DB::Exception: Unknown table ... (UNKNOWN_TABLE)`.
 * The sync API prefixes `Query failed: `; nested exceptions repeat the `Code:`
 * marker, and the first one is the code ClickHouse itself reports.
 */
export function fromEngineError(raw: string): ClickHouseException {
  const message = raw.replace(/^Query failed: /, '').trim();
  const code = /Code: (\d+)\./.exec(message);
  const types = [...message.matchAll(/\(([A-Z][A-Z0-9_]{2,})\)/g)];
  const type = types.at(-1)?.[1];
  if (code?.[1] && type) return new ClickHouseException(Number(code[1]), type, message);
  // Not an engine exception (e.g. the addon refusing a call): still a well-formed one for the client.
  return new ClickHouseException(errorCodes.STD_EXCEPTION, 'STD_EXCEPTION', message);
}

const statusGroups: Array<[number, string[]]> = [
  [401, ['REQUIRED_PASSWORD']],
  [403, ['UNKNOWN_USER', 'WRONG_PASSWORD', 'AUTHENTICATION_FAILED', 'SET_NON_GRANTED_ROLE', 'ACCESS_DENIED']],
  [
    400,
    [
      'BAD_ARGUMENTS', 'CANNOT_COMPILE_REGEXP', 'CANNOT_PARSE_TEXT', 'CANNOT_PARSE_ESCAPE_SEQUENCE', 'CANNOT_PARSE_QUOTED_STRING',
      'CANNOT_PARSE_DATE', 'CANNOT_PARSE_DATETIME', 'CANNOT_PARSE_NUMBER', 'CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING', 'CANNOT_PARSE_IPV4',
      'CANNOT_PARSE_IPV6', 'CANNOT_PARSE_INPUT_ASSERTION_FAILED', 'CANNOT_PARSE_UUID', 'DUPLICATE_COLUMN', 'ILLEGAL_COLUMN',
      'UNKNOWN_ELEMENT_IN_AST', 'UNKNOWN_TYPE_OF_AST_NODE', 'THERE_IS_NO_COLUMN', 'TOO_DEEP_AST', 'TOO_BIG_AST',
      'UNEXPECTED_AST_STRUCTURE', 'SYNTAX_ERROR', 'INCORRECT_DATA', 'TYPE_MISMATCH', 'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
    ],
  ],
  [
    404,
    [
      'UNKNOWN_TABLE', 'UNKNOWN_FUNCTION', 'UNKNOWN_IDENTIFIER', 'UNKNOWN_TYPE', 'UNKNOWN_STORAGE', 'UNKNOWN_DATABASE',
      'UNKNOWN_SETTING', 'UNKNOWN_DIRECTION_OF_SORTING', 'UNKNOWN_AGGREGATE_FUNCTION', 'UNKNOWN_FORMAT',
      'UNKNOWN_DATABASE_ENGINE', 'UNKNOWN_TYPE_OF_QUERY', 'UNKNOWN_ROLE',
    ],
  ],
  [413, ['QUERY_IS_TOO_LARGE']],
  [501, ['NOT_IMPLEMENTED']],
  [503, ['SOCKET_TIMEOUT', 'CANNOT_OPEN_FILE', 'CANNOT_SCHEDULE_TASK']],
  [411, ['HTTP_LENGTH_REQUIRED']],
  [408, ['TIMEOUT_EXCEEDED']],
  [415, ['UNSUPPORTED_MEDIA_TYPE']],
];

const statusByType = new Map(statusGroups.flatMap(([status, types]) => types.map((t) => [t, status] as const)));
