import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { htmlText } from '../../src/inbound/html-text.js';
import { strippedText } from '../../src/inbound/stripped-text.js';

/** Replies in the formats Gmail, Outlook and Apple Mail write (test/fixtures/inbound/). */
const sample = (name: string) => readFileSync(new URL(`../fixtures/inbound/${name}`, import.meta.url), 'utf8');

describe('strippedText', () => {
  it('cuts a Gmail reply at its "On ... wrote:" line', () => {
    expect(strippedText(sample('gmail-plain.txt'))).toBe('Thanks, that works for me. See you on Tuesday.\n\nJane');
  });

  it('cuts at an attribution Gmail wrapped onto two lines', () => {
    expect(strippedText(sample('gmail-wrapped-attribution.txt'))).toBe('Sounds good, Tuesday at 3 it is.');
  });

  it("cuts a Gmail HTML-only reply's derived text at its attribution", () => {
    const text = htmlText(sample('gmail-reply.html'));
    expect(text).toContain('> Your order #1234 has shipped');
    expect(strippedText(text)).toBe('Thanks, that works for me.\n\nJane');
  });

  it('cuts German and French attributions', () => {
    expect(strippedText(sample('gmail-german.txt'))).toBe('Passt, danke!');
    expect(strippedText(sample('gmail-french.txt'))).toBe('Parfait, merci !');
  });

  it("cuts at Outlook's -----Original Message-----", () => {
    expect(strippedText(sample('outlook-original-message.txt'))).toBe(
      'Hi,\n\nPlease find the signed contract attached.\n\nRegards,\nBob Smith\nContoso Ltd.',
    );
  });

  it("cuts at Outlook's underscore line above its From/Sent/To/Subject block", () => {
    expect(strippedText(sample('outlook-header-block.txt'))).toBe('Thanks, received.\n\nBob');
  });

  it("cuts at Outlook's From/Sent/Subject block without the underscore line", () => {
    expect(strippedText(sample('outlook-header-block-no-rule.txt'))).toBe('Received, thank you.');
  });

  it('cuts an Apple Mail reply, with the attribution above the quote or inside it', () => {
    expect(strippedText(sample('apple-mail.txt'))).toBe('Perfect, thank you!');
    expect(strippedText(sample('apple-iphone.txt'))).toBe('Perfect, thank you!\n\nSent from my iPhone');
  });

  it('cuts at a "-- " signature delimiter', () => {
    expect(strippedText(sample('signature.txt'))).toBe('Yes, please go ahead with the upgrade.');
  });

  it('leaves a message without a quote as it is, but for trailing whitespace', () => {
    const text = sample('no-quote.txt');
    expect(strippedText(text)).toBe(text.trimEnd());
    expect(strippedText(`${text}\n\n  \t\n`)).toBe(text.trimEnd());
  });

  it('keeps an interleaved reply (quotes with answers below them) whole', () => {
    const text = sample('interleaved.txt');
    expect(strippedText(text)).toBe(text.trimEnd());
    expect(strippedText(`${text}\n> Thanks, see you then.\n>\n`)).toBe(text.trimEnd());
  });

  it("answers '' for a message that is only quoted text", () => {
    expect(strippedText('> all of it\n> quoted\n')).toBe('');
    expect(strippedText('On Fri, Nov 27, 2026 at 10:02 AM A <a@example.com> wrote:\n> quoted')).toBe('');
  });

  it('keeps CRLF line ends and takes markers on CRLF lines', () => {
    const text = 'Fine by me.\r\nJane\r\n\r\n-----Original Message-----\r\nFrom: a@example.com\r\n';
    expect(strippedText(text)).toBe('Fine by me.\r\nJane');
    expect(strippedText('Yes.\r\n-- \r\nJane\r\n')).toBe('Yes.');
  });

  it('takes no prose for an attribution', () => {
    const text = 'On the whole, as the report wrote:\nsales are up.\nAm Ende schrieb er:\ngut.';
    expect(strippedText(text)).toBe(text);
  });

  it('finishes 5 MB of pathological lines in linear time', () => {
    const patterns = [
      `On ${'1 wrote: '.repeat(500)}`,
      `Am ${' schrieb '.repeat(500)}x`,
      `On${' '.repeat(900)}x`,
      `${'-'.repeat(500)}Original Message${'-'.repeat(400)}x`,
      `${'_'.repeat(990)}x`,
      'From: x',
      '________________________________',
      `> ${'>'.repeat(900)}`,
      'On 1 <',
      '',
    ];
    const lines: string[] = [];
    let size = 0;
    for (let i = 0; size < 5 * 1024 * 1024; i++) {
      const line = patterns[i % patterns.length]!;
      lines.push(line);
      size += line.length + 1;
    }
    const started = performance.now();
    strippedText(lines.join('\n'));
    // One very long line, and a run of quoted lines to the end that the backward scan walks.
    strippedText(`On 1 ${'wrote: '.repeat(750_000)}`);
    strippedText(`reply\n${'> quoted\n'.repeat(600_000)}`);
    // Quoted lines and then an answer: a trailing-quote regex like /(?:\n(?:>.*)?)+$/ retries from every line
    // (20,000 lines took it 3 s; these 600,000, hours).
    expect(strippedText(`${'> quoted\n'.repeat(600_000)}answer`)).toMatch(/answer$/);
    const elapsed = performance.now() - started;
    // A quadratic scan of these inputs takes minutes; linear takes well under a second even on a loaded machine.
    expect(elapsed).toBeLessThan(1500);
  });
});

describe('htmlText', () => {
  it('puts blocks on lines, breaks at <br>, quotes blockquotes and hides head, script and style', () => {
    const html =
      '<html><head><title>T</title><style>p{}</style></head><body><p>Hello&nbsp;<b>there</b>,\n  friend</p>' +
      '<script>alert(1)</script><div>a<br>b</div><ul><li>one</li><li>two</li></ul>' +
      '<blockquote>quoted <blockquote>deeper</blockquote></blockquote><pre>  keep\n  this</pre></body></html>';
    expect(htmlText(html)).toBe(
      'Hello\u00a0there, friend\n\na\nb\n\n- one\n- two\n\n> quoted\n\n> > deeper\n\n  keep\n  this',
    );
  });

  it('reads deeply nested and huge HTML in linear time, without a stack', () => {
    const depth = 1_000_000;
    const started = performance.now();
    const text = htmlText(`${'<blockquote><div>'.repeat(depth)}x${'</div></blockquote>'.repeat(depth)}`);
    expect(text).toBe(`${'> '.repeat(10)}x`);
    expect(htmlText('<p>hello world</p>'.repeat(500_000)).length).toBeGreaterThan(5_000_000);
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
