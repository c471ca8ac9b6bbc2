import type { ComponentChildren } from 'preact';

/** A one-line form that creates something in place (label, input, button): submitting calls `onSubmit` and never navigates. */
export function InlineForm({ onSubmit, children }: { onSubmit: () => void; children: ComponentChildren }) {
  return (
    <form
      class="inline-form"
      onSubmit={(e) => {
        e.preventDefault();
        onSubmit();
      }}
    >
      {children}
    </form>
  );
}
