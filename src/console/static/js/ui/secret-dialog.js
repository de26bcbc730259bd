/** The one time a new API key or webhook secret is shown. */
import { h, uniqueId } from '../dom.js';
import { announceError } from './announce.js';
import { copyField } from './copy.js';
import { showDialog } from './dialog.js';

/** The dialog that shows `secret` once, with `note` and an optional `example` under it. */
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

/**
 * The submit of a form that creates a key or a webhook: `create()` (a refusal is announced and the form kept),
 * then the form is reset, the list reloaded and `dialogOf(created)` shown (showSecretOnce's options).
 */
export async function createThenShowSecret(form, create, reload, dialogOf) {
  let created;
  try {
    created = await create();
  } catch (err) {
    announceError(err);
    return;
  }
  form.reset();
  await reload().catch(announceError);
  await showSecretOnce(dialogOf(created));
}
