/**
 * Modal dialogs on the native <dialog>: showModal() makes the page behind inert (so focus stays inside),
 * Escape closes it, and a <form method="dialog"> closes it with the clicked button's value.
 */
import { h, uniqueId } from '../dom.js';

/**
 * Shows a dialog and resolves with the `value` of the button that closed it ('' when closed by Escape).
 * actions: [{label, value, variant?: 'primary' | 'danger' | 'secondary'}]; only the 'cancel' value skips
 * the form's validation.
 */
export function showDialog({ title, content, actions = [{ label: 'Close', value: 'close', variant: 'primary' }] }) {
  const opener = document.activeElement;
  const titleId = uniqueId('dialog-title');
  const dialog = h(
    'dialog',
    { class: 'dialog', 'aria-labelledby': titleId },
    h(
      'form',
      { method: 'dialog' },
      h('h2', { id: titleId, class: 'dialog-title' }, title),
      h('div', { class: 'dialog-body' }, content),
      h(
        'div',
        { class: 'dialog-actions' },
        actions.map((a) =>
          h(
            'button',
            {
              type: 'submit',
              value: a.value,
              class: `button ${a.variant ?? 'secondary'}`,
              formnovalidate: a.value === 'cancel',
            },
            a.label,
          ),
        ),
      ),
    ),
  );
  document.body.append(dialog);
  dialog.showModal();
  return new Promise((resolve) => {
    dialog.addEventListener(
      'close',
      () => {
        // Removed, not hidden: a secret shown once must not stay in the page.
        dialog.remove();
        if (opener && document.contains(opener)) opener.focus();
        resolve(dialog.returnValue);
      },
      { once: true },
    );
  });
}

/** Asks before something that cannot be undone; resolves true when confirmed. */
export async function confirmAction({ title, message, confirmLabel }) {
  const answer = await showDialog({
    title,
    content: h('p', {}, message),
    actions: [
      { label: 'Cancel', value: 'cancel' },
      { label: confirmLabel, value: 'confirm', variant: 'danger' },
    ],
  });
  return answer === 'confirm';
}
