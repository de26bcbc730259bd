/**
 * The admin token lives in sessionStorage: it survives a reload but not the closing of the tab, and is
 * never written to a cookie (so no request carries it unless the console adds it).
 */
const KEY = 'mailer.adminToken';

export const session = {
  token: () => sessionStorage.getItem(KEY),
  signIn: (token) => sessionStorage.setItem(KEY, token),
  signOut: () => sessionStorage.removeItem(KEY),
};
