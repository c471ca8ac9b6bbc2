import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * Metrics whose values live elsewhere as plain numbers (a stats() object, a counter
 * field incremented on a hot path) and are read only when Prometheus scrapes. Nothing
 * is done per event: the source keeps counting as it always did.
 */
export type Labelled<L extends string> = ReadonlyArray<readonly [labels: Record<L, string>, value: number]>;

export interface CollectedSpec<L extends string> {
  name: string;
  help: string;
  labelNames?: readonly L[];
  /** The current value: one number, or one per label set when labelNames are given. */
  read(): number | Labelled<L>;
}

function fill<L extends string>(set: (labels: Record<L, string> | null, value: number) => void, value: number | Labelled<L>): void {
  if (typeof value === 'number') set(null, value);
  else for (const [labels, v] of value) set(labels, v);
}

/** A counter from a running total kept by its source (which only ever grows while the process lives). */
export function collectedCounter<L extends string = never>(registry: Registry, spec: CollectedSpec<L>): Counter<L> {
  const counter: Counter<L> = new Counter<L>({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labelNames ?? [],
    registers: [registry],
    collect() {
      counter.reset();
      fill<L>((labels, v) => (labels === null ? counter.inc(v) : counter.inc(labels, v)), spec.read());
    },
  });
  return counter;
}

/** A gauge from a value its source knows (buffered events, links held, a lag). */
export function collectedGauge<L extends string = never>(registry: Registry, spec: CollectedSpec<L>): Gauge<L> {
  const gauge: Gauge<L> = new Gauge<L>({
    name: spec.name,
    help: spec.help,
    labelNames: spec.labelNames ?? [],
    registers: [registry],
    collect() {
      gauge.reset();
      fill<L>((labels, v) => (labels === null ? gauge.set(v) : gauge.set(labels, v)), spec.read());
    },
  });
  return gauge;
}
