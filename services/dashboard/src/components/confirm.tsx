import { useEffect, useId, useRef } from 'preact/hooks';
import type { ComponentChildren } from 'preact';

/** A modal <dialog>: focus is trapped and Escape cancels, as the platform does it. */
export function Confirm(props: { open: boolean; title: string; children: ComponentChildren; confirmLabel: string; onConfirm(): void; onCancel(): void }) {
  const ref = useRef<HTMLDialogElement>(null);
  // A page may hold several (a link's and a rule's): each titles itself.
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} onCancel={props.onCancel} onClose={props.onCancel}>
      <h2 id={titleId}>{props.title}</h2>
      <div>{props.children}</div>
      <div class="actions">
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
      </div>
    </dialog>
  );
}
