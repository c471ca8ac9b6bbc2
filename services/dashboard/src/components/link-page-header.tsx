import type { ComponentChildren } from 'preact';
import { href } from '../router.ts';

/** A link page's header, live or deleted: the way back to the links, its heading and what it says under it, and its actions beside. */
export function LinkPageHeader({ title, children, actions }: { title: ComponentChildren; children?: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <header class="view-header">
      <div>
        <p class="breadcrumb">
          <a href={href('links')}>Links</a> /
        </p>
        <h1>{title}</h1>
        {children}
      </div>
      {actions}
    </header>
  );
}
