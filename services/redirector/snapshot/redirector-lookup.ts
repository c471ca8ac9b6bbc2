import type { RoutableLink } from '../../../shared/routing/index.ts';
import type { LinkLookup } from '../ports.ts';

/**
 * What the HTTP layer would like from the snapshot beyond LinkLookup. Optional until
 * SnapshotStore provides them; each has a documented fallback in app.ts:
 *   ready()   a full snapshot has been loaded (fallback: size > 0)
 *   size      links held, reported by /ready (SnapshotStore has it)
 *   findById  the link a verified click id names, for the conversion pixel's
 *             trackingType check (fallback: the pixel reports nothing)
 */
export interface RedirectorLookup extends LinkLookup {
  readonly size?: number;
  ready?(): boolean;
  findById?(linkId: string): RoutableLink | undefined;
}
