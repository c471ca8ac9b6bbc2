import { clickHouseException } from './clickhouse-exception.ts';

/**
 * A minimal multipart/form-data reader (RFC 7578) for what ClickHouse's HTTP
 * interface accepts there: @clickhouse/client moves `query` and `param_<name>`
 * into such a body when the parameters are too long for a URL. The body is
 * already in memory (it is small: a query and its parameters).
 */
export interface FormPart {
  name: string;
  /** Set for file parts, which ClickHouse treats as external tables. */
  filename: string | undefined;
  value: Buffer;
}

export function multipartBoundary(contentType: string | undefined): string | undefined {
  if (!contentType || !/^multipart\/form-data\b/i.test(contentType)) return undefined;
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  if (!boundary) throw clickHouseException('UNSUPPORTED_MEDIA_TYPE', 'multipart/form-data without a boundary');
  return boundary;
}

export function parseMultipart(body: Buffer, boundary: string): FormPart[] {
  const delimiter = Buffer.from(`--${boundary}`);
  const parts: FormPart[] = [];
  let at = body.indexOf(delimiter);
  if (at < 0) throw malformed('no boundary found');
  for (;;) {
    const afterDelimiter = at + delimiter.length;
    // `--boundary--` closes the body.
    if (body[afterDelimiter] === 0x2d && body[afterDelimiter + 1] === 0x2d) return parts;
    const headersStart = skipLineBreak(body, afterDelimiter);
    const headersEnd = body.indexOf('\r\n\r\n', headersStart);
    if (headersEnd < 0) throw malformed('part without a header block');
    const next = body.indexOf(delimiter, headersEnd + 4);
    if (next < 0) throw malformed('unterminated part');
    // The CRLF before a delimiter belongs to the delimiter, not to the value.
    const valueEnd = body[next - 2] === 0x0d && body[next - 1] === 0x0a ? next - 2 : next;
    const headers = body.toString('utf8', headersStart, headersEnd);
    const disposition = /^content-disposition:\s*form-data(.*)$/im.exec(headers)?.[1] ?? '';
    const name = /;\s*name="([^"]*)"/i.exec(disposition)?.[1];
    if (name === undefined) throw malformed('part without a name');
    parts.push({ name, filename: /;\s*filename="([^"]*)"/i.exec(disposition)?.[1], value: body.subarray(headersEnd + 4, valueEnd) });
    at = next;
  }
}

function skipLineBreak(body: Buffer, at: number): number {
  if (body[at] === 0x0d && body[at + 1] === 0x0a) return at + 2;
  if (body[at] === 0x0a) return at + 1;
  return at;
}

function malformed(what: string) {
  return clickHouseException('UNSUPPORTED_MEDIA_TYPE', `Malformed multipart/form-data body: ${what}`);
}
