/** Number and date formatting in the reader's locale; one place so every view agrees. */
const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const decimal = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });

export const fmtInt = (n: number): string => integer.format(n);
export const fmtMoney = (n: number): string => decimal.format(n);
export const fmtPercent = (n: number): string => `${decimal.format(n)} %`;

/**
 * An instant as the clock of `timeZone` reads it: a report's rows in its zone, so a time
 * never falls on a day outside the report's days (the browser's zone may be another).
 */
export function fmtDateTime(iso: string | null | undefined, timeZone?: string): string {
  if (!iso) return '';
  return new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short', ...(timeZone ? { timeZone } : {}) });
}

/** A time of day, short ("6:11 AM"), on the clock of `timeZone` (the browser's when none). */
export function fmtTime(at: string | Date, timeZone?: string): string {
  return new Date(at).toLocaleTimeString(undefined, { timeStyle: 'short', ...(timeZone ? { timeZone } : {}) });
}

export function fmtDate(iso: string): string {
  return new Date(iso).toLocaleDateString(undefined, { dateStyle: 'medium' });
}

/** "+12.5 %" / "−3.0 %" / "new" for a change from `before` to `now`; null when both are 0. */
export function fmtChange(now: number, before: number): { text: string; direction: 'up' | 'down' | 'flat' } | null {
  if (now === 0 && before === 0) return null;
  if (before === 0) return { text: 'new', direction: 'up' };
  const change = ((now - before) / before) * 100;
  const direction = Math.abs(change) < 0.05 ? 'flat' : change > 0 ? 'up' : 'down';
  return { text: `${change > 0 ? '+' : change < 0 ? '−' : '±'}${decimal.format(Math.abs(change)).replace(/\.00$/, '.0')} %`, direction };
}

const regionNames = typeof Intl.DisplayNames === 'function' ? new Intl.DisplayNames(undefined, { type: 'region' }) : null;

export function countryName(code: string | null | undefined): string {
  if (!code) return 'Unknown';
  try {
    return regionNames?.of(code) ?? code;
  } catch (err) {
    // Not a region code Intl knows the form of: RangeError.
    if (err instanceof RangeError) return code;
    throw err;
  }
}

/** How the dashboard names a link everywhere: `/code`, `host/code` on a custom domain (codes are unique per domain). */
export const shortLinkName = (shortCode: string, domain?: string | null): string => `${domain ?? ''}/${shortCode}`;

/** A link's name (shortLinkName) from the link itself: redirectDomain is the default host too, named only for a custom domain. */
export const linkName = (link: { shortCode: string; domainId: string | null; redirectDomain: string }): string => shortLinkName(link.shortCode, link.domainId ? link.redirectDomain : null);

/** A deleted link's name in words, where text names it (chips, the realtime strip): its code may name a newer link now. */
export const deletedLinkName = (name: string): string => `${name} (deleted)`;
