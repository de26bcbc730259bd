import { describe, expect, it } from 'vitest';
import { attachmentDisposition, safeFilename, servedContentType } from '../../src/domain/inbound-content.js';

/** How strangers' bytes are labelled when the API serves them (domain/inbound-content.ts): as an attacker would try. */
describe('servedContentType', () => {
  it('keeps a plain declared type, lower case and without parameters', () => {
    expect(servedContentType('image/PNG')).toBe('image/png');
    expect(servedContentType('text/plain; charset="utf-8"')).toBe('text/plain');
    expect(servedContentType('application/vnd.openxmlformats-officedocument.wordprocessingml.document')).toBe(
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    );
    expect(servedContentType('message/rfc822')).toBe('message/rfc822');
  });

  it('answers anything a browser would render as a page or run as application/octet-stream', () => {
    for (const active of [
      'text/html',
      'TEXT/HTML; charset=utf-8',
      ' text/html',
      'application/xhtml+xml',
      'image/svg+xml',
      'text/xml',
      'application/xml',
      'application/rss+xml',
      'text/javascript',
      'application/javascript',
      'text/css',
      'application/pdf',
      'multipart/x-mixed-replace; boundary=x',
      'message/partial',
      'text/x-server-parsed-html',
    ])
      expect(servedContentType(active), active).toBe('application/octet-stream');
  });

  it('answers a malformed or smuggling type as application/octet-stream', () => {
    for (const bad of [
      '',
      'html',
      'text/',
      '/html',
      'text/plain\r\nX-Injected: 1',
      'text/pl ain',
      'a/b/c',
      `x/${'y'.repeat(200)}`,
    ])
      expect(servedContentType(bad), JSON.stringify(bad)).toBe('application/octet-stream');
  });
});

describe('safeFilename and attachmentDisposition', () => {
  it('keeps the last path segment without what breaks a header or a disk', () => {
    expect(safeFilename('../../etc/passwd', 'x')).toBe('passwd');
    expect(safeFilename('C:\\Users\\a\\evil.exe', 'x')).toBe('evil.exe');
    expect(safeFilename('a"b\r\nSet-Cookie: c=d.txt', 'x')).toBe('abSet-Cookie c=d.txt');
    expect(safeFilename('...hidden', 'x')).toBe('hidden');
    expect(safeFilename('résumé 2026.pdf', 'x')).toBe('résumé 2026.pdf');
    expect(safeFilename('n'.repeat(300), 'x')).toHaveLength(200);
    for (const empty of [null, '', '..', '/', ' \u0000 '])
      expect(safeFilename(empty, 'attachment-0'), JSON.stringify(empty)).toBe('attachment-0');
  });

  it('gives the name in ASCII and in UTF-8 (RFC 6266), one header line', () => {
    expect(attachmentDisposition('résumé 2026.pdf')).toBe(
      `attachment; filename="r_sum_ 2026.pdf"; filename*=UTF-8''r%C3%A9sum%C3%A9%202026.pdf`,
    );
    expect(attachmentDisposition("50% 'off' (1).txt")).toBe(
      `attachment; filename="50_ 'off' (1).txt"; filename*=UTF-8''50%25%20%27off%27%20%281%29.txt`,
    );
    expect(attachmentDisposition('\u{1F600}.png')).toMatch(
      /^attachment; filename="__\.png"; filename\*=UTF-8''%F0%9F%98%80\.png$/,
    );
  });
});
