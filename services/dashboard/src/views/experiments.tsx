import { api, unwrap } from '../api.ts';
import { ErrorBox } from '../components/error-box.tsx';
import type { Range } from '../components/range-controls.tsx';
import { fmtInt, fmtMoney, fmtPercent } from '../format.ts';
import { useLoad } from '../use-load.ts';
import { TableScroll } from '../components/table-scroll.tsx';
import type { Dimension } from '../api.ts';

interface Variant {
  comparison: {
    uplift: number | null;
    difference: number;
    confidenceInterval: readonly number[];
    pValue: number;
    significant: boolean;
    insufficientSample: string | null;
  } | null;
}

const signed = (n: number) => `${n > 0 ? '+' : n < 0 ? '−' : '±'}${Math.abs(n).toFixed(2)}`;
const points = (n: number) => `${signed(n)} points`;
/** Three decimals say nothing of a p value below them. */
const pValue = (p: number) => (p < 0.001 ? 'p < 0.001' : `p = ${p.toFixed(3)}`);

/** What the comparison with the control means, in words an analyst would use. */
export function verdict(v: Variant): string {
  const c = v.comparison;
  if (!c) return 'Control: the others are compared with this one.';
  // The API says why, in a sentence of its own.
  if (c.insufficientSample) return `${c.insufficientSample[0]!.toUpperCase()}${c.insufficientSample.slice(1)}.`;
  const [lo = 0, hi = 0] = c.confidenceInterval;
  const range = `the true difference is between ${signed(lo)} and ${points(hi)} (95 % confidence)`;
  const uplift = c.uplift === null ? '' : ` (${c.uplift > 0 ? '+' : c.uplift < 0 ? '−' : ''}${Math.abs(c.uplift).toFixed(1)} % relative)`;
  if (!c.significant) return `No clear difference from the control: ${points(c.difference)}${uplift}, but ${range}, ${pValue(c.pValue)}.`;
  return `${c.difference > 0 ? 'Converts better' : 'Converts worse'} than the control: ${points(c.difference)}${uplift}; ${range}, ${pValue(c.pValue)}.`;
}

/**
 * The link's rules as experiments: each variant's conversion rate against the control,
 * over the page's period and filters (as its figures: a Germany chip narrows both).
 */
export function ExperimentsSection({ linkId, range, filters }: { linkId: string; range: Range; filters: Partial<Record<Dimension, string>> }) {
  const query = { from: range.from, to: range.to, timezone: range.timezone, ...filters };
  const report = useLoad(
    (signal) => unwrap(api.GET('/analytics/experiments/{linkId}', { params: { path: { linkId }, query }, signal })),
    [linkId, range.from, range.to, range.timezone, JSON.stringify(filters)],
  );
  const data = report.data?.data;
  return (
    <section aria-labelledby="experiments-title" class="experiments">
      <div class="section-header">
        <h2 id="experiments-title">Experiments</h2>
        <button type="button" onClick={report.reload}>
          Refresh
        </button>
      </div>
      <p class="muted">
        Each rule that sent visitors somewhere is a variant, compared with the default destination{data ? ` (${data.from} to ${data.to})` : ''}. A verdict needs at least{' '}
        {data ? `${fmtInt(data.minimumSample.clicks)} clicks and ${fmtInt(data.minimumSample.conversions)} converted clicks` : 'enough clicks and converted clicks'} per variant.
      </p>
      {report.error && <ErrorBox error={report.error} onRetry={report.reload} />}
      {/* The table's frame from the start (its header, a row saying it loads): only its rows come with the answer. */}
      {(data || !report.error) && (
        <TableScroll label={'Variants of this link against the control'}>
          <table class="experiments-table">
            <caption class="visually-hidden">Variants of this link against the control</caption>
            <thead>
              <tr>
                <th scope="col">Variant</th>
                <th scope="col" class="num">
                  Clicks
                </th>
                <th scope="col" class="num">
                  Visitors
                </th>
                <th scope="col" class="num">
                  Conversions
                </th>
                <th scope="col" class="num" title="Clicks with at least one conversion, per 100 clicks">
                  Conversion rate <span class="muted">(converted clicks)</span>
                </th>
                <th scope="col" class="num">
                  Revenue per click
                </th>
                <th scope="col">Against the control</th>
              </tr>
            </thead>
            <tbody>
              {!data && (
                <tr class="experiments-pending">
                  <td colSpan={7} class="muted">
                    Loading…
                  </td>
                </tr>
              )}
              {data?.variants.length === 0 && (
                <tr>
                  <td colSpan={7} class="muted">
                    No clicks in this range yet.
                  </td>
                </tr>
              )}
              {data?.variants.map((v) => (
                <tr key={v.variant} data-variant={v.variant}>
                  <th scope="row">
                    {v.variant === 'default' ? 'Default destination' : v.name || `${v.type ?? ''} rule`}
                    {v.isControl && <span class="badge">control</span>}
                  </th>
                  <td class="num" data-clicks>
                    {fmtInt(v.clicks)}
                  </td>
                  <td class="num">{fmtInt(v.uniqueVisitors)}</td>
                  <td class="num">{fmtInt(v.conversions)}</td>
                  <td class="num">{fmtPercent(v.conversionRate)}</td>
                  <td class="num">{fmtMoney(v.revenuePerClick)}</td>
                  <td class={`verdict ${v.comparison?.significant ? 'significant' : ''}`}>{verdict(v)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableScroll>
      )}
    </section>
  );
}

