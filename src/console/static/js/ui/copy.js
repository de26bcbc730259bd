/** Copying secrets and DNS values: the Clipboard API where the browser allows it, else select the text. */
import { h } from '../dom.js';
import { announce } from './announce.js';

async function copyFrom(input) {
  try {
    // Absent outside secure contexts (a console opened over plain http on another host), and may be refused.
    await navigator.clipboard.writeText(input.value);
    announce('Copied to the clipboard.');
  } catch {
    input.focus();
    input.select();
    announce('Selected: press Ctrl+C (⌘C on a Mac) to copy.');
  }
}

/** A read-only field with a Copy button; `label` names both for assistive technology. */
export function copyField({ id, label, value, className = '' }) {
  const input = h('input', {
    id,
    class: `copy-input ${className}`,
    type: 'text',
    readonly: true,
    value,
    spellcheck: 'false',
    autocomplete: 'off',
  });
  const button = h(
    'button',
    { type: 'button', class: 'button secondary small', 'aria-label': `Copy ${label}`, onclick: () => copyFrom(input) },
    'Copy',
  );
  return h('div', { class: 'copy-field' }, input, button);
}
