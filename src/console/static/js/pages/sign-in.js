/**
 * Sign-in with the admin token (the operator's view of every account) or an API key of permission `all` (that
 * account's own pages). The service checks it and answers an HttpOnly session cookie; the page keeps nothing.
 */
import { h } from '../dom.js';
import { navigate } from '../router.js';
import { session } from '../session.js';
import { announce } from '../ui/announce.js';
import { onSubmit } from '../ui/form.js';

export async function render() {
  const input = h('input', {
    id: 'admin-token',
    name: 'token',
    type: 'password',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'admin-token-hint',
  });
  const error = h('p', { class: 'form-error', id: 'sign-in-error', hidden: true });
  const form = onSubmit(
    h(
      'form',
      { class: 'sign-in-form', 'aria-labelledby': 'sign-in-title' },
      h(
        'div',
        { class: 'field' },
        h('label', { for: 'admin-token' }, 'Admin token or API key'),
        input,
        h(
          'span',
          { class: 'hint', id: 'admin-token-hint' },
          'The admin token (MAILER_ADMIN_TOKEN, printed by the first npm start and kept in .data/admin-token) for every account, or an API key of permission all (mk_…) for its own account.',
        ),
      ),
      error,
      h('button', { type: 'submit', class: 'button primary wide' }, 'Sign in'),
    ),
    async () => {
      const token = input.value.trim();
      try {
        await session.signIn(token);
      } catch (err) {
        error.textContent = err.message;
        error.hidden = false;
        input.setAttribute('aria-invalid', 'true');
        input.setAttribute('aria-describedby', 'sign-in-error admin-token-hint');
        announce(err.message, 'error');
        input.focus();
        return;
      }
      input.value = '';
      navigate(session.home());
      announce(session.isOperator() ? 'Signed in.' : `Signed in to ${session.account().name}.`);
    },
  );

  return h(
    'div',
    { class: 'sign-in' },
    h(
      'div',
      { class: 'card sign-in-card' },
      h('div', { class: 'brand large' }, 'mailer'),
      h('h1', { class: 'page-title', id: 'sign-in-title', tabindex: -1 }, 'Sign in to the console'),
      form,
    ),
  );
}
