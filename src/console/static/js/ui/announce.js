/**
 * Status messages go to the one aria-live region (#status), which screen readers read out and which is
 * also shown on screen as a toast until the next message or a few seconds.
 */
const SHOWN_MS = 6000;
let timer;

/** kind: 'info' or 'error' (shown in red). */
export function announce(message, kind = 'info') {
  const region = document.getElementById('status');
  clearTimeout(timer);
  region.dataset.kind = kind;
  region.textContent = message;
  region.classList.add('visible');
  timer = setTimeout(() => {
    region.classList.remove('visible');
    region.textContent = '';
  }, SHOWN_MS);
}

/** Announces a failed API call with the API's own message. */
export function announceError(err) {
  announce(err.message || String(err), 'error');
}
