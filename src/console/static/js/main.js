/**
 * The console's entry: routes each hash to its page, keeps signed-out operators on the sign-in page, and
 * swaps pages in only when they are ready (a slow page never overwrites a newer one).
 */
import { setUnauthorizedHandler } from './api.js';
import { h } from './dom.js';
import { currentRoute, matchRoute, navigate } from './router.js';
import { session } from './session.js';
import { announce } from './ui/announce.js';
import { errorPanel } from './ui/page.js';
import * as accountPage from './pages/account.js';
import * as accountsPage from './pages/accounts.js';
import * as caughtMessagePage from './pages/caught-message.js';
import * as catcherPage from './pages/catcher.js';
import * as emailPage from './pages/email.js';
import * as signInPage from './pages/sign-in.js';

/** `nav` is the sidebar entry shown as current. */
const ROUTES = [
  { pattern: '/sign-in', page: signInPage, public: true },
  { pattern: '/accounts', page: accountsPage, nav: 'accounts' },
  { pattern: '/accounts/:id', page: accountPage, nav: 'accounts' },
  { pattern: '/accounts/:id/:tab', page: accountPage, nav: 'accounts' },
  { pattern: '/accounts/:id/:tab/:itemId', page: accountPage, nav: 'accounts' },
  { pattern: '/emails/:id', page: emailPage, nav: 'accounts' },
  { pattern: '/catcher', page: catcherPage, nav: 'catcher' },
  { pattern: '/catcher/:id', page: caughtMessagePage, nav: 'catcher' },
];

const main = document.getElementById('main');
const sidebar = document.querySelector('.sidebar');
let current = { path: null, cleanups: [] };

async function show() {
  const { path, query } = currentRoute();
  const match = matchRoute(ROUTES, path);
  if (!match) return navigate(session.token() ? '/accounts' : '/sign-in');
  if (!match.route.public && !session.token()) return navigate('/sign-in');
  if (match.route.public && session.token()) return navigate('/accounts');

  current.cleanups.forEach((fn) => fn());
  const pathChanged = current.path !== path;
  const visit = { path, cleanups: [] };
  current = visit;

  sidebar.hidden = Boolean(match.route.public);
  for (const link of sidebar.querySelectorAll('[data-nav]')) {
    if (link.dataset.nav === match.route.nav) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  if (pathChanged) main.replaceChildren(h('p', { class: 'loading' }, 'Loading…'));

  let node;
  try {
    node = await match.route.page.render({
      params: match.params,
      query,
      onCleanup: (fn) => visit.cleanups.push(fn),
      refresh: show,
    });
  } catch (err) {
    node = errorPanel(err);
  }
  if (current !== visit) {
    visit.cleanups.forEach((fn) => fn());
    return;
  }
  main.replaceChildren(node);
  // A new page moves focus to its heading, as a page load would; a new filter or page number does not.
  if (pathChanged) (main.querySelector('h1') ?? main).focus();
  document.title = `${(main.querySelector('h1 .title-text') ?? main.querySelector('h1'))?.textContent ?? 'Console'} · mailer`;
}

setUnauthorizedHandler(() => {
  session.signOut();
  navigate('/sign-in');
  announce('The admin token was refused: sign in again.', 'error');
});

document.getElementById('sign-out').addEventListener('click', () => {
  session.signOut();
  navigate('/sign-in');
  announce('Signed out.');
});

// The URL's hash is the route, so the skip link moves focus itself instead of changing the hash.
document.querySelector('.skip-link').addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});

window.addEventListener('hashchange', show);
show();
