/** The one time a new API key or webhook secret is shown. */
import { h, uniqueId } from '../dom.js';
import { copyField } from './copy.js';
import { showDialog } from './dialog.js';

export function showSecretOnce({ title, label, secret, note, example }) {
  const id = uniqueId('secret');
  return showDialog({
    title,
    content: [
      h('p', { class: 'callout warning' }, 'Copy it now: it is shown only this once and cannot be viewed again.'),
      h('label', { for: id }, label),
      copyField({ id, label, value: secret, className: 'secret-value' }),
      note ? h('p', { class: 'hint' }, note) : null,
      example ? h('pre', { class: 'code' }, h('code', {}, example)) : null,
    ],
    actions: [{ label: 'I have copied it', value: 'done', variant: 'primary' }],
  });
}
