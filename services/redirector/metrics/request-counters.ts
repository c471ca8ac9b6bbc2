import type { PixelRefusalReason } from '../serving/pixel.ts';
import { PlainHistogram } from '../../../shared/metrics/plain-histogram.ts';

/**
 * What the redirector answered, counted on the request path as plain number fields
 * (an increment of a field of one long-lived object: no allocation, no lookup, no
 * label hashing); Prometheus reads them at scrape time (redirector-metrics.ts).
 * HEAD requests count like GETs: the answer is the same.
 */
export class RequestCounters {
  /** 302 to a destination (default or a rule's). */
  redirect = 0;
  /** iOS deep-link page or Android intent: redirect. */
  deepLink = 0;
  /** redirectBehavior `never`: 204. */
  noContent = 0;
  /** Unknown, disabled or deleted code, rule_only with no match, any other path. */
  notFound = 0;
  /** Expired or at clicksLimit: 410 page. */
  gone = 0;
  /** Expired or at clicksLimit with an expiredUrl: 302 there. */
  expiredRedirect = 0;
  /** Password form shown. */
  passwordForm = 0;
  /** Password POST refused: wrong, throttled (429), not a form, too large, or the link has no password (405). */
  passwordRejected = 0;
  /** `/i/{code}` impression GIF. */
  impression = 0;
  /** `/p.gif` conversion pixel. */
  pixel = 0;
  /** 500: a handler threw or a destination was unusable. */
  error = 0;
}

/** Verified conversion pixels of pixel links whose conversion was refused, by reason (the GIF was answered). */
export class PixelRefusals {
  /** value_too_large: the value was above PIXEL_MAX_VALUE; unknown_event: an event name s2s would refuse. */
  readonly byReason: Record<PixelRefusalReason, number> = { value_too_large: 0, unknown_event: 0 };
}

/** Prometheus label of each counter (`outcome="..."`). */
export const outcomeLabels: Record<keyof RequestCounters, string> = {
  redirect: 'redirect',
  deepLink: 'deeplink',
  noContent: 'no_content',
  notFound: 'not_found',
  gone: 'gone',
  expiredRedirect: 'expired_redirect',
  passwordForm: 'password_form',
  passwordRejected: 'password_rejected',
  impression: 'impression',
  pixel: 'pixel',
  error: 'error',
};

/**
 * Timing every request would cost two clock reads (~100 ns each on virtualised
 * machines, measured) on a path budgeted in microseconds; one request in
 * LATENCY_SAMPLE_EVERY is timed instead: ~3 ns a request on average, and still
 * hundreds of samples a second under load, plenty for a latency distribution.
 */
export const LATENCY_SAMPLE_EVERY = 64;

/** Seconds: a served redirect takes microseconds in-process; the tail shows GC pauses. */
export function redirectLatencyHistogram(): PlainHistogram {
  return new PlainHistogram([0.000_005, 0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.005, 0.025]);
}
