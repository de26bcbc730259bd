/**
 * Saving what the API answered as a file. The management API needs the admin token, which a plain link cannot
 * send, so a download is fetched first and then saved from a blob: URL.
 */
import { h } from '../dom.js';
import { announce, announceError } from './announce.js';

/** Saves `blob` as a file named `filename` (the browser's download, as a link with `download` would). */
export function saveBlob(blob, filename) {
  const url = window.URL.createObjectURL(blob);
  const link = h('a', { href: url, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  // After the click has started the download.
  setTimeout(() => window.URL.revokeObjectURL(url), 0);
}

/**
 * A button that fetches a file (`fetchBlob()` answers a Blob) and saves it as `filename`; disabled while it
 * runs, a failure announced with the API's message. `label` is its text, `name` its accessible name.
 */
export function downloadButton({ label, name = label, filename, fetchBlob, variant = 'secondary small' }) {
  return h(
    'button',
    {
      type: 'button',
      class: `button ${variant}`,
      'aria-label': name === label ? null : name,
      onclick: async (event) => {
        const button = event.currentTarget;
        button.disabled = true;
        try {
          saveBlob(await fetchBlob(), filename);
          announce(`${filename} downloaded.`);
        } catch (err) {
          announceError(err);
        } finally {
          button.disabled = false;
        }
      },
    },
    label,
  );
}
