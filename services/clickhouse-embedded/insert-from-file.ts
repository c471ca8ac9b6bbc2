/**
 * INSERT data read by the engine from a spool file instead of following the
 * statement's text.
 *
 * Why: chDB parses data appended to an INSERT's text (its raw insert entry) on
 * one thread and through extra copies; the same bytes named by `FROM INFILE`
 * go through its parallel file reader. Measured on chdb 3.4 (2 cores, 100k
 * click rows into `events` with its rollup view): about 25-45 % less engine
 * CPU per insert, and half on a table without views.
 *
 * It is still an INSERT with its data, not an INSERT SELECT: column defaults,
 * block deduplication (by content, or by insert_deduplication_token),
 * materialized views and rows_written behave as for inline data. Only the shape
 * @clickhouse/client's insert() and exec() produce is rewritten:
 *
 *   INSERT INTO <table>[ (<column>, ...)] FORMAT <format>
 *
 * Anything else (SETTINGS or SELECT before FORMAT, table functions, comments)
 * keeps the inline path.
 */
const IDENTIFIER = '(?:[A-Za-z_][A-Za-z0-9_]*|`[^`\\\\]+`)';
const TABLE = `${IDENTIFIER}(?:\\.${IDENTIFIER})?`;
const COLUMNS = `\\(\\s*${IDENTIFIER}(?:\\s*,\\s*${IDENTIFIER})*\\s*\\)`;
const CLIENT_INSERT = new RegExp(`^\\s*INSERT\\s+INTO\\s+(${TABLE}(?:\\s*${COLUMNS})?)\\s+FORMAT\\s+([A-Za-z][A-Za-z0-9_]*)\\s*$`, 'i');

export interface FileInsert {
  /** `<table>[ (<columns>)]`, as the client wrote it. */
  target: string;
  format: string;
}

/** The parts of a client-shaped `INSERT INTO ... FORMAT ...`; null for any other statement. */
export function fileInsertShape(sql: string): FileInsert | null {
  const match = CLIENT_INSERT.exec(sql);
  return match ? { target: match[1]!, format: match[2]! } : null;
}

/**
 * The statement reading the data from `path`. COMPRESSION 'none' because the
 * engine would otherwise guess a codec from the file name.
 */
export function insertFromFileSql(insert: FileInsert, path: string): string {
  return `INSERT INTO ${insert.target} FROM INFILE ${stringLiteral(path)} COMPRESSION 'none' FORMAT ${insert.format}`;
}

function stringLiteral(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * Formats whose data is bytes, not text: for them only an empty body is empty
 * (a body of space or newline bytes is data).
 */
export function isBinaryFormat(format: string): boolean {
  return /^(RowBinary|Native|Parquet|Arrow|ORC|Avro|Protobuf|CapnProto|MsgPack|BSONEachRow|Npy|RawBLOB)/i.test(format);
}
