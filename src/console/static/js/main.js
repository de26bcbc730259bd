/**
 * The console's entry: asks the service who is signed in, routes each hash to its page, keeps signed-out
 * visitors on the sign-in page and an account's session on its own account's pages, and swaps pages in only
 * when they are ready (a slow page never overwrites a newer one).
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
import * as egressPage from './pages/egress.js';
import * as emailPage from './pages/email.js';
import * as signInPage from './pages/sign-in.js';

/** `nav` is the sidebar entry shown as current; `operator`: the operator's alone (an account is sent home). */
const ROUTES = [
  { pattern: '/sign-in', page: signInPage, public: true },
  { pattern: '/accounts', page: accountsPage, nav: 'accounts', operator: true },
  { pattern: '/accounts/:id', page: accountPage, nav: 'accounts' },
  { pattern: '/accounts/:id/:tab', page: accountPage, nav: 'accounts' },
  { pattern: '/accounts/:id/:tab/:itemId', page: accountPage, nav: 'accounts' },
  { pattern: '/emails/:id', page: emailPage, nav: 'accounts' },
  { pattern: '/catcher', page: catcherPage, nav: 'catcher', operator: true },
  { pattern: '/catcher/:id', page: caughtMessagePage, nav: 'catcher', operator: true },
  { pattern: '/egress', page: egressPage, nav: 'egress', operator: true },
];

const main = document.getElementById('main');
const sidebar = document.querySelector('.sidebar');
let current = { path: null, cleanups: [] };

async function show() {
  const { path, query } = currentRoute();
  const match = matchRoute(ROUTES, path);
  const signedIn = session.signedIn();
  if (!match) return navigate(signedIn ? session.home() : '/sign-in');
  if (!match.route.public && !signedIn) return navigate('/sign-in');
  if (match.route.public && signedIn) return navigate(session.home());
  // An account's session has its own account's pages only (another account's id would show its own data anyway).
  if (signedIn && !session.isOperator()) {
    const accountId = path.startsWith('/accounts/') ? match.params.id : undefined;
    if (match.route.operator || (accountId !== undefined && accountId !== session.account().id))
      return navigate(session.home());
  }

  current.cleanups.forEach((fn) => fn());
  const pathChanged = current.path !== path;
  const visit = { path, cleanups: [] };
  current = visit;

  sidebar.hidden = Boolean(match.route.public);
  if (signedIn) dressSidebar();
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

/**
 * The sidebar of the session: the operator's Accounts, Mail catcher and Egress, or the account's own pages (its
 * name, linking its overview) and neither of the others; and who is signed in.
 */
function dressSidebar() {
  const operator = session.isOperator();
  const accounts = sidebar.querySelector('[data-nav="accounts"]');
  if (accounts) {
    accounts.textContent = operator ? 'Accounts' : session.account().name;
    accounts.setAttribute('href', `#${session.home()}`);
  }
  sidebar.querySelector('.brand')?.setAttribute('href', `#${session.home()}`);
  for (const nav of ['catcher', 'egress']) {
    const link = sidebar.querySelector(`[data-nav="${nav}"]`);
    if (link) link.parentElement.hidden = !operator;
  }
  const who = document.getElementById('signed-in-as');
  if (who)
    who.textContent = operator ? 'Signed in as the operator' : `Signed in with an API key of ${session.account().name}`;
}

setUnauthorizedHandler(() => {
  session.forget();
  navigate('/sign-in');
  announce('Your session has ended (or its key was deleted): sign in again.', 'error');
});

document.getElementById('sign-out').addEventListener('click', async () => {
  try {
    await session.signOut();
  } catch {
    // Forgotten here all the same; the service ends the session at its expiry.
  }
  navigate('/sign-in');
  announce('Signed out.');
});

// The URL's hash is the route, so the skip link moves focus itself instead of changing the hash.
document.querySelector('.skip-link').addEventListener('click', (event) => {
  event.preventDefault();
  main.focus();
});

window.addEventListener('hashchange', show);
session.load().then(show, (err) => {
  main.replaceChildren(errorPanel(err));
});
