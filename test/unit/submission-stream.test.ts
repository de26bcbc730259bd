import type { ParsedMail } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { streamOfMessage } from '../../src/services/submission-stream.js';
import type { AppError } from '../../src/errors.js';

/** A parsed message with these header lines (the only part streamOfMessage reads). */
function parsed(lines: [string, string][]): ParsedMail {
  return {
    headerLines: lines.map(([name, value]) => ({ key: name.toLowerCase(), line: `${name}: ${value}` })),
  } as Pick<ParsedMail, 'headerLines'> as ParsedMail;
}
const failure = (lines: [string, string][]) => {
  try {
    streamOfMessage(parsed(lines));
  } catch (err) {
    expect((err as AppError).kind).toBe('validation');
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
};

describe('the stream a submitted message names', () => {
  it('is none without the headers (the send then is transactional)', () => {
    expect(streamOfMessage(parsed([['X-Other', 'x']]))).toEqual({ stream: '', topic: '' });
  });

  it('reads X-Mail-Stream (a token, in any case) and X-Mail-Topic', () => {
    expect(streamOfMessage(parsed([['X-Mail-Stream', ' Broadcast ']]))).toEqual({ stream: 'broadcast', topic: '' });
    expect(
      streamOfMessage(
        parsed([
          ['X-Mail-Stream', 'broadcast'],
          ['X-Mail-Topic', 'weekly.news'],
        ]),
      ),
    ).toEqual({ stream: 'broadcast', topic: 'weekly.news' });
    expect(streamOfMessage(parsed([['X-Mail-Stream', 'transactional']]))).toEqual({
      stream: 'transactional',
      topic: '',
    });
  });

  it('refuses another stream, a topic without broadcast, a bad topic and a repeated header', () => {
    expect(failure([['X-Mail-Stream', 'bulk']])).toBe(
      'X-Mail-Stream must be one of transactional, broadcast; got "bulk"',
    );
    expect(failure([['X-Mail-Topic', 'news']])).toBe('X-Mail-Topic is only allowed with stream "broadcast"');
    expect(
      failure([
        ['X-Mail-Stream', 'broadcast'],
        ['X-Mail-Topic', 'weekly news'],
      ]),
    ).toMatch(/^X-Mail-Topic: "weekly news" must be 1 to 64 of/);
    expect(
      failure([
        ['X-Mail-Stream', 'broadcast'],
        ['X-Mail-Stream', 'transactional'],
      ]),
    ).toBe('x-mail-stream: give the header once (it appears 2 times)');
  });
});
