/**
 * What an Android `intent:` URL asks of the browser, checked part by part. Chrome reads
 * `#Intent;key=value;...;end`: `scheme` picks the URL the intent opens and
 * `S.browser_fallback_url` the page opened when no app answers, so either can carry
 * `javascript:` or `data:` past a check of the outer URL alone (its scheme is `intent:`).
 */
const INTENT_MARKER = '#intent;';
/** Schemes that run code in the browser or read local content. */
export const codeRunningSchemes = new Set(['javascript', 'data', 'vbscript', 'file', 'blob']);
const SCHEME = /^[a-z][a-z0-9+.-]*$/i;
/** Java package / class / action names. */
const JAVA_NAME = /^[A-Za-z0-9_.$]+$/;

/** The scheme a URL-ish value starts with, lowercased, ignoring what browsers skip before it; null when none. */
function leadingScheme(value: string): string | null {
  // Browsers strip leading C0 controls and spaces, and tabs/newlines anywhere, before parsing.
  const cleaned = value.replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+/, '');
  const match = /^([a-z][a-z0-9+.-]*):/i.exec(cleaned);
  return match === null ? null : match[1]!.toLowerCase();
}

function decoded(value: string): string | null {
  try {
    return decodeURIComponent(value);
  } catch (err) {
    if (err instanceof URIError) return null;
    throw err;
  }
}

function isHttpUrl(value: string): boolean {
  const url = URL.parse(value);
  if (url === null) return false;
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
}

/** Why `value` (an app URL) is refused, or null when it is acceptable. */
export function intentUrlProblem(value: string): string | null {
  const markerAt = value.toLowerCase().indexOf(INTENT_MARKER);
  const isIntent = /^intent:/i.test(value);
  if (!isIntent) {
    // Converted to an intent by appending our own extras: its own would come first.
    return markerAt === -1 ? null : 'must not carry #Intent; extras unless it is an intent: URL';
  }
  if (markerAt === -1) return null;
  const parts = value.slice(markerAt + INTENT_MARKER.length).split(';');
  const endAt = parts.indexOf('end');
  if (endAt !== -1 && parts.slice(endAt + 1).some((p) => p !== '')) return 'must not have intent extras after end';
  for (const part of endAt === -1 ? parts : parts.slice(0, endAt)) {
    if (part === '' || part === 'SEL') continue;
    const eq = part.indexOf('=');
    if (eq <= 0) return `intent extra "${part.slice(0, 40)}" must be key=value`;
    const key = part.slice(0, eq);
    const raw = decoded(part.slice(eq + 1));
    if (raw === null) return `intent extra ${key.slice(0, 40)} has a malformed %-escape`;
    switch (key) {
      case 'scheme':
        if (!SCHEME.test(raw)) return 'intent scheme must be a URL scheme';
        if (codeRunningSchemes.has(raw.toLowerCase()) || raw.toLowerCase() === 'intent') return `intent scheme ${raw.toLowerCase()} is not allowed`;
        break;
      case 'S.browser_fallback_url':
        if (!isHttpUrl(raw)) return 'intent S.browser_fallback_url must be an absolute http(s) URL';
        break;
      case 'package':
      case 'action':
      case 'category':
        if (!JAVA_NAME.test(raw)) return `intent ${key} must be a Java name`;
        break;
      case 'component':
        if (!/^[A-Za-z0-9_.$]+\/[A-Za-z0-9_.$]+$/.test(raw)) return 'intent component must be package/class';
        break;
      default: {
        // Other extras are the app's business, but none may smuggle a code-running URL.
        const scheme = leadingScheme(raw);
        if (scheme !== null && codeRunningSchemes.has(scheme)) return `intent extra ${key.slice(0, 40)} must not be a ${scheme}: URL`;
      }
    }
  }
  return null;
}
