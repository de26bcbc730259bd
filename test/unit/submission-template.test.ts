import type { ParsedMail } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { templateOfMessage } from '../../src/services/submission-template.js';

/** A parsed message with these header lines (the only part templateOfMessage reads). */
function parsed(lines: [string, string][]): ParsedMail {
  return {
    headerLines: lines.map(([name, value]) => ({ key: name.toLowerCase(), line: `${name}: ${value}` })),
  } as Pick<ParsedMail, 'headerLines'> as ParsedMail;
}
const empty = { subject: '', text: '', html: '' };
const failure = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
};

describe('the template a submitted message names', () => {
  it('is none without the headers, and reads id, variables, locale and version when given', () => {
    expect(templateOfMessage(parsed([['X-Other', 'x']]), { subject: 's', text: 't', html: '' })).toBeUndefined();
    expect(
      templateOfMessage(
        parsed([
          ['X-Mail-Template', ' welcome '],
          ['X-Mail-Template-Variables', '{"name":"Ann","items":[1,2]}'],
          ['X-Mail-Template-Locale', 'de-AT'],
          ['X-Mail-Template-Version', '3'],
        ]),
        { subject: '', text: '\r\n', html: '' },
      ),
    ).toEqual({ id: 'welcome', variables: { name: 'Ann', items: [1, 2] }, locale: 'de-AT', version: 3 });
  });

  it('unfolds and decodes RFC 2047 encoded words before reading JSON', () => {
    const ref = templateOfMessage(
      parsed([
        ['X-Mail-Template', 'w'],
        ['X-Mail-Template-Variables', '=?UTF-8?Q?{"name":"Zo=C3=AB"?=\r\n =?UTF-8?Q?,"x":"y"}?='],
      ]),
      empty,
    );
    expect(ref?.variables).toEqual({ name: 'Zoë', x: 'y' });
  });

  it('refuses a malformed, repeated or stray header, and content beside the template', () => {
    const t: [string, string] = ['X-Mail-Template', 'w'];
    expect(failure(() => templateOfMessage(parsed([t, ['X-Mail-Template-Variables', '[1]']]), empty))).toMatch(
      /must be a JSON object/,
    );
    expect(failure(() => templateOfMessage(parsed([t, ['X-Mail-Template-Variables', '{']]), empty))).toMatch(
      /must be a JSON object: /,
    );
    expect(failure(() => templateOfMessage(parsed([t, ['X-Mail-Template-Version', '0']]), empty))).toMatch(
      /version number from 1/,
    );
    expect(failure(() => templateOfMessage(parsed([t, ['X-Mail-Template', 'v']]), empty))).toMatch(
      /give the header once \(it appears 2 times\)/,
    );
    expect(failure(() => templateOfMessage(parsed([['X-Mail-Template', '']]), empty))).toMatch(/is empty/);
    expect(failure(() => templateOfMessage(parsed([['X-Mail-Template-Locale', 'de']]), empty))).toMatch(
      /x-mail-template-locale needs x-mail-template/,
    );
    for (const content of [
      { ...empty, subject: 'mine' },
      { ...empty, text: 'body' },
      { ...empty, html: '<p>x</p>' },
    ])
      expect(failure(() => templateOfMessage(parsed([t]), content))).toMatch(/must have no Subject and an empty body/);
  });
});
