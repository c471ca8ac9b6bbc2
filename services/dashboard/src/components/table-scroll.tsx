import type { ComponentChildren } from 'preact';

/**
 * The box a wide table scrolls in at narrow widths: a named region that takes the
 * focus, so a keyboard user can scroll it with the arrow keys (WCAG 2.1.1; axe's
 * scrollable-region-focusable), whether or not the table holds a control.
 */
export function TableScroll({ label, busy, children }: { label: string; busy?: boolean; children: ComponentChildren }) {
  return (
    <div class="table-scroll" tabIndex={0} role="region" aria-label={label} aria-busy={busy === undefined ? undefined : busy ? 'true' : 'false'}>
      {children}
    </div>
  );
}
