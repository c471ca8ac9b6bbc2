/**
 * Which URL parameters of a ClickHouse HTTP request are query settings, and
 * which of those the embedded engine should apply.
 *
 * As on a real server, every parameter that is not a protocol parameter (or a
 * `param_<name>` query parameter) is a setting. Of those, transport settings
 * (compression, progress headers, ...) are about the HTTP layer: this endpoint
 * reads the ones it implements and never SETs them on the engine. A setting the
 * engine does not know is ignored and reported rather than failing the query:
 * clients send settings for newer or older servers, and the stand-in must not
 * break where production would not.
 */
export const protocolParams: ReadonlySet<string> = new Set([
  'query', 'database', 'default_format', 'query_id', 'session_id', 'session_timeout', 'session_check', 'close_session',
  'compress', 'decompress', 'user', 'password', 'quota_key', 'stacktrace', 'role', 'client_protocol_version',
  'buffer_size', 'wait_end_of_query',
]);

export const queryParamPrefix = 'param_';

const transportSettings: ReadonlySet<string> = new Set([
  'enable_http_compression', 'send_progress_in_http_headers', 'add_http_cors_header', 'cancel_http_readonly_queries_on_client_close',
]);

/**
 * Known settings never applied: `readonly` cannot be lowered again on the
 * connection that raised it, and the connection is shared by every request. The
 * linkroute API sends it with its reads (readonly=2) only so that a server cancels
 * them when their client goes away, as this endpoint does for every statement.
 */
const neverApplied: ReadonlySet<string> = new Set(['readonly']);

const settingName = /^[A-Za-z_][A-Za-z0-9_]*$/;

export class SettingsPolicy {
  private readonly known: ReadonlySet<string>;

  /** @param known every name in the engine's system.settings (aliases included). */
  constructor(known: ReadonlySet<string>) {
    this.known = known;
  }

  /**
   * Splits a request's settings into those to SET on the engine, those ignored as the
   * engine does not know them, and known ones it never applies (neverApplied); the
   * last two are reported, not fatal.
   */
  split(settings: ReadonlyMap<string, string>): { apply: Map<string, string>; ignored: string[]; unenforced: string[] } {
    const apply = new Map<string, string>();
    const ignored: string[] = [];
    const unenforced: string[] = [];
    for (const [name, value] of settings) {
      if (name.startsWith('http_') || transportSettings.has(name)) continue;
      if (neverApplied.has(name)) unenforced.push(name);
      // Only names the engine listed reach SQL, so a name can never carry SQL.
      else if (settingName.test(name) && this.known.has(name)) apply.set(name, value);
      else ignored.push(name);
    }
    return { apply, ignored, unenforced };
  }
}
