/** Public surface of the routing engine. */
export { compileLink } from './compile.ts';
export { hydrateLink, routableLink } from './hydrate.ts';
export { decide, platformIndex } from './decide.ts';
export { visitorBucket, visitorHash } from './visitor-bucket.ts';
export { percentageTotal, maxPercentageTotal } from './percentage-total.ts';
export { compareRules, orderRules } from './rule-order.ts';
export { androidIntentUrl } from './deep-link.ts';
export { compiledLinkVersion } from './types.ts';
export { RoutingError, type RoutingErrorCode } from './routing-error.ts';
export type * from './types.ts';
