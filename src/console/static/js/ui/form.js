/** Form controls with real <label>s and hints tied by aria-describedby. */
import { h, uniqueId } from '../dom.js';

/** A labelled control: `control` is an input/select built by the caller, given an id here. */
export function field(label, control, hint) {
  const id = control.id || uniqueId('field');
  control.id = id;
  let hintEl = null;
  if (hint) {
    hintEl = h('span', { class: 'hint', id: `${id}-hint` }, hint);
    control.setAttribute('aria-describedby', hintEl.id);
  }
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintEl);
}

/** A <select> of plain values; '' may be offered as the "all" choice with `anyLabel`. */
export function select(name, values, selected, anyLabel) {
  return h(
    'select',
    { name },
    anyLabel ? h('option', { value: '', selected: !selected }, anyLabel) : null,
    values.map((v) => h('option', { value: v, selected: v === selected }, v)),
  );
}

/** Calls `onSubmit(form)` instead of navigating, with the submit button disabled while it runs. */
export function onSubmit(form, handler) {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const buttons = form.querySelectorAll('button[type=submit]');
    buttons.forEach((b) => (b.disabled = true));
    try {
      await handler(form);
    } finally {
      buttons.forEach((b) => (b.disabled = false));
    }
  });
  return form;
}

/** `value` when it is one of `values`, else '' (no filter): a query parameter made safe to send. */
export function oneOf(values, value) {
  return values.includes(value) ? value : '';
}

/** The labelled status filter of a list: `statuses` and 'all' (''), calling `onChange(status)` on a choice. */
export function statusFilter(statuses, selected, onChange) {
  const filter = select('status', statuses, selected, 'all');
  filter.addEventListener('change', () => onChange(filter.value));
  return field('Status', filter);
}
