import type { RoutableLink } from '../../shared/routing/index.ts';
import type { ClickEvent } from '../../shared/schemas/click-event.ts';

/**
 * What the request path needs from the rest of the redirector. Both are
 * synchronous and in memory: the request path never awaits and never does I/O.
 */
export interface LinkLookup {
  /**
   * The link served at `shortCode` for a request with this Host header: a verified
   * custom domain's link when the host is one, else the default domain's link.
   */
  find(host: string, shortCode: string): RoutableLink | undefined;
  /** Counted (non-bot) clicks of a link so far, across all redirectors, for clicksLimit. */
  clicks(linkId: string): number;
  /** The link a verified click id names (the conversion pixel checks its trackingType). */
  findById(linkId: string): RoutableLink | undefined;
  /** Links held, reported by /ready. */
  readonly size: number;
  /** A full snapshot has been loaded: /ready answers 200 from then on. */
  ready(): boolean;
}

export interface ClickSink {
  /** Queues an event for publishing; never blocks, never throws. Also counts the click locally. */
  emit(event: ClickEvent): void;
}
