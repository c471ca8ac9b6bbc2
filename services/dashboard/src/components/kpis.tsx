import { fmtChange } from '../format.ts';

export interface Kpi {
  label: string;
  /** Not known yet: the box shows its label and note, and an ellipsis for the figure. */
  value: number | undefined;
  previous?: number | undefined;
  format(n: number): string;
  /** What the figure is made of, where its label alone would mislead (shown under it). */
  note?: string;
}

/** Headline figures, each with its change against the period before it of the same length. */
export function Kpis({ items, comparedTo }: { items: Kpi[]; comparedTo?: string | undefined }) {
  return (
    <dl class="kpis">
      {items.map((k) => {
        const change = k.previous === undefined || k.value === undefined ? null : fmtChange(k.value, k.previous);
        return (
          <div class="kpi" key={k.label}>
            <dt>{k.label}</dt>
            <dd>
              {k.value === undefined ? (
                <span class="kpi-value muted">…</span>
              ) : (
                <span class="kpi-value" data-kpi={k.label}>
                  {k.format(k.value)}
                </span>
              )}
              {change && (
                <span class={`change ${change.direction}`} title={comparedTo ? `against ${comparedTo}` : undefined}>
                  {change.text}
                  <span class="visually-hidden"> against {comparedTo ?? 'the previous period'}</span>
                </span>
              )}
              {k.note && <span class="kpi-note muted">{k.note}</span>}
            </dd>
          </div>
        );
      })}
    </dl>
  );
}
