import type { Dimension } from './api.ts';

export interface BreakdownGroup {
  id: string;
  title: string;
  /** Its tabs, the first shown by default. */
  dimensions: readonly Dimension[];
}

/** Plausible's arrangement: four cards, each a tab per related dimension, one request per card. */
export const breakdownGroups = [
  { id: 'locations', title: 'Locations', dimensions: ['country', 'region', 'city'] },
  { id: 'devices', title: 'Devices', dimensions: ['device', 'os', 'browser'] },
  { id: 'sources', title: 'Sources', dimensions: ['referrer', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'source'] },
  { id: 'links', title: 'Links', dimensions: ['link', 'campaign', 'tag', 'rule', 'destination'] },
] as const satisfies readonly BreakdownGroup[];

/**
 * Every dimension the API offers (its `dimension` enum, through the generated
 * client types) has a tab: a dimension added to the API and not placed here fails
 * `npm run typecheck` on this line, naming it. breakdown-groups.test.ts checks the
 * same against the schema at run time.
 */
type Unplaced = Exclude<Dimension, (typeof breakdownGroups)[number]['dimensions'][number]>;
export const everyDimensionPlaced: [Unplaced] extends [never] ? true : { unplaced: Unplaced } = true;
