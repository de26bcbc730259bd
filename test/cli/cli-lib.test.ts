import { describe, expect, it } from 'vitest';
import { parseCsv, splitAddresses } from '../../cli/lib/batch-file.js';
import { create } from '@bufbuild/protobuf';
import { EVENT_TYPE_OPTIONS, eventLine } from '../../cli/lib/event-lines.js';
import { EVENT_TYPES } from '../../src/domain/catalog.js';
import { table } from '../../cli/lib/format.js';
import { MailEventSchema } from '../../src/gen/mail/v1/email_service_pb.js';
import { guessType, parseHeaders, parseTags } from '../../cli/lib/message-input.js';
import { progressLine } from '../../cli/lib/progress.js';
import { parseDuration, scheduledAt } from '../../cli/lib/when.js';
import type { BatchJob } from '../../src/gen/mail/v1/types_pb.js';

/** The CLI's own parsing and rendering, without a service. */

describe('durations and times', () => {
  it('parses --in durations', () => {
    expect(parseDuration('2s')).toBe(2_000);
    expect(parseDuration('10m')).toBe(600_000);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1.5h')).toBe(5_400_000);
    expect(parseDuration('2d')).toBe(172_800_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('1h 30m')).toBe(5_400_000);
    for (const bad of ['', 'soon', '10', '10x', 'm10', '0s', '1h 2'])
      expect(() => parseDuration(bad), bad).toThrow(/--in must be/);
  });

  it('computes scheduled_at from --in, keeps --at as written, refuses neither or a non-time', () => {
    expect(scheduledAt(undefined, '10m', Date.parse('2026-01-01T00:00:00Z'))).toBe('2026-01-01T00:10:00.000Z');
    expect(scheduledAt('2026-01-01T09:00:00+02:00', undefined)).toBe('2026-01-01T09:00:00+02:00');
    expect(() => scheduledAt(undefined, undefined)).toThrow(/--at .* or --in/);
    expect(() => scheduledAt('tomorrow', undefined)).toThrow(/--at must be an ISO 8601 time/);
  });
});

describe('batch files', () => {
  it('reads RFC 4180 CSV: quotes, doubled quotes, line breaks in quoted cells, CRLF', () => {
    expect(parseCsv('a,b,c\r\n1,"x, y","say ""hi"""\n2,"two\nlines",\n')).toEqual([
      ['a', 'b', 'c'],
      ['1', 'x, y', 'say "hi"'],
      ['2', 'two\nlines', ''],
    ]);
    expect(() => parseCsv('a\n"open')).toThrow(/not closed/);
  });

  it('splits address lists on , and ; except inside quotes and angle brackets', () => {
    expect(splitAddresses('a@x.org; b@x.org,c@x.org')).toEqual(['a@x.org', 'b@x.org', 'c@x.org']);
    expect(splitAddresses('"Doe, Jane" <j@x.org>;Bob <b@x.org>')).toEqual(['"Doe, Jane" <j@x.org>', 'Bob <b@x.org>']);
    expect(splitAddresses('')).toEqual([]);
  });
});

describe('event types', () => {
  // The CLI reaches the service only through its API (no import of src/domain), so it keeps its own copy.
  it("--type offers exactly the API's event vocabulary", () => {
    expect([...EVENT_TYPE_OPTIONS]).toEqual([...EVENT_TYPES]);
  });
});

describe('message flags', () => {
  it('parses headers and tags, refusing malformed ones', () => {
    expect(parseHeaders(['X-A: 1', 'X-Url: http://x.org/a'])).toEqual({ 'X-A': '1', 'X-Url': 'http://x.org/a' });
    expect(() => parseHeaders(['nocolon'])).toThrow(/Name: value/);
    expect(parseTags(['a=1', 'b=x=y'])).toEqual({ a: '1', b: 'x=y' });
    expect(() => parseTags(['=1'])).toThrow(/name=value/);
  });

  it('guesses media types by extension', () => {
    expect(guessType('a.PDF')).toBe('application/pdf');
    expect(guessType('notes.txt')).toBe('text/plain');
    expect(guessType('blob')).toBe('application/octet-stream');
  });
});

describe('rendering', () => {
  it('aligns tables and says when there is nothing', () => {
    expect(
      table(
        ['ID', 'NAME'],
        [
          ['a', 'first'],
          ['longer', 'x'],
        ],
      ),
    ).toBe('ID      NAME\na       first\nlonger  x');
    expect(table(['ID', 'NAME'], [])).toBe('ID  NAME\n(none)');
  });

  it('draws the progress of a batch job', () => {
    const job = {
      jobId: 'bat_1',
      totalCount: 10,
      sentCount: 4,
      failedCount: 1,
      status: 'processing',
      createdAt: '',
    } as BatchJob;
    expect(progressLine(job)).toBe('[###############---------------] 5/10  sent 4  failed 1  processing');
  });

  it("prints an event's line: its email, or for an inbound event (no email) the inbound email", () => {
    const at = '2026-11-28T01:00:00.000Z';
    const delivery = create(MailEventSchema, {
      id: 'evt_1',
      event: 'delivery',
      timestamp: at,
      email: { id: 'em_1', to: ['a@example.net', 'b@example.net'] },
    });
    expect(eventLine(delivery)).toBe(`${at}  delivery   em_1  a@example.net, b@example.net  evt_1`);
    const inbound = create(MailEventSchema, {
      id: 'evt_2',
      event: 'inbound',
      timestamp: at,
      data: { id: 'in_1', to: ['support@example.com'], from: 'x@example.net' },
    });
    expect(eventLine(inbound)).toBe(`${at}  inbound    in_1  support@example.com  evt_2`);
  });
});
