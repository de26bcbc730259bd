import { describe, expect, it } from 'vitest';
import { parseDuration } from '../../src/delivery/egress/durations.js';
import { parsePoolsSetting } from '../../src/delivery/egress/pools-setting.js';
import { formatRate, parseRate } from '../../src/delivery/egress/rate.js';
import { EgressRulesError, parseEgressRules } from '../../src/delivery/egress/rules-file.js';
import { mxGlobMatches, siteOf } from '../../src/delivery/egress/site-grouping.js';
import { warmupAllowance } from '../../src/delivery/egress/warmup.js';

describe('rates', () => {
  it('reads a count per unit (/s /min /h /d) and writes it back', () => {
    expect(parseRate('600/min')).toEqual({ count: 600, perMs: 60_000 });
    expect(parseRate('5/s')).toEqual({ count: 5, perMs: 1000 });
    expect(parseRate('10000/h')).toEqual({ count: 10_000, perMs: 3_600_000 });
    expect(parseRate('50/d')).toEqual({ count: 50, perMs: 86_400_000 });
    for (const text of ['600/min', '5/s', '10000/h', '50/d']) expect(formatRate(parseRate(text)!)).toBe(text);
  });

  it('refuses anything else', () => {
    for (const bad of ['600', '600 per minute', '600/minute', '0/min', '-1/s', '1.5/s', '/min', '600/m', 'ten/s', '']) {
      expect(parseRate(bad), bad).toBeNull();
    }
  });
});

describe('durations', () => {
  it('reads s m h d', () => {
    expect(parseDuration('90s')).toBe(90_000);
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('1h')).toBe(3_600_000);
    expect(parseDuration('1d')).toBe(86_400_000);
  });

  it('refuses anything else', () => {
    for (const bad of ['90', '1 hour', '0s', '1.5h', 'h', '2w', '30min', ''])
      expect(parseDuration(bad), bad).toBeNull();
  });
});

describe('MAILER_EGRESS_POOLS', () => {
  it('reads name=address[/ehlo],...; a stream-named pool serves that stream', () => {
    expect(parsePoolsSetting(' broadcast = 127.0.0.3/mta3.example.com, 127.0.0.4 ; other=::1 ', 'me.example')).toEqual([
      {
        name: 'broadcast',
        streams: ['broadcast'],
        accounts: [],
        sources: [
          { address: '127.0.0.3', ehlo: 'mta3.example.com', warmup: null },
          { address: '127.0.0.4', ehlo: 'me.example', warmup: null },
        ],
      },
      { name: 'other', streams: [], accounts: [], sources: [{ address: '::1', ehlo: 'me.example', warmup: null }] },
    ]);
    expect(parsePoolsSetting(undefined, 'x')).toEqual([]);
    expect(parsePoolsSetting('  ', 'x')).toEqual([]);
  });

  it.each([
    ['bulk', /is not name=address/],
    ['bulk=mail.example.com', /"mail.example.com" is not an IP address/],
    ['bulk=', /has no address/],
    ['b ad=127.0.0.1', /is not a pool name/],
    ['bulk=127.0.0.1;bulk=127.0.0.2', /named twice/],
    ['bulk=127.0.0.1,127.0.0.1', /listed twice/],
    ['bulk=127.0.0.1/not a name', /not a host name/],
  ])('refuses %s', (setting, message) => {
    expect(() => parsePoolsSetting(setting, 'x')).toThrow(EgressRulesError);
    expect(() => parsePoolsSetting(setting, 'x')).toThrow(message);
  });
});

const FULL = `
site_grouping = "mx-host"

[default]
connection_limit = 4
messages_per_connection = 80
rate = "600/min"

[[automation]]
match = '^421 4\\.7\\.0 .*try again later'
action = "throttle"
rate = "60/min"
duration = "30m"

[site.google]
mx = ["*.google.com", "*.googlemail.com"]
connection_limit = 5
messages_per_connection = 50
rate = "1000/min"
[[site.google.automation]]
match = '4\\.7\\.28'
action = "suspend"
duration = "1h"
[[site.google.automation]]
match = 'spam'
action = "suspend-source"
duration = "90s"
[[site.google.automation]]
match = 'over quota'
action = "bounce"

[pool.bulk]
streams = ["broadcast"]
accounts = ["acc_1"]
[[pool.bulk.source]]
address = "127.0.0.3"
ehlo = "mta2.example.com"
warmup = { start = "2026-11-28", daily = [50, 100, 200, 500] }
[[pool.bulk.source]]
address = "127.0.0.4"
warmup = { start = 2026-11-27, daily = [0] }
`;

describe('parseEgressRules', () => {
  it('reads every part of the format', () => {
    const rules = parseEgressRules(FULL, 'transactional=127.0.0.9', 'me.example');
    expect(rules.siteGrouping).toBe('mx-host');
    expect(rules.defaults).toEqual({
      connectionLimit: 4,
      messagesPerConnection: 80,
      rate: { count: 600, perMs: 60_000 },
    });
    expect(rules.automation).toEqual([
      {
        pattern: '^421 4\\.7\\.0 .*try again later',
        action: { kind: 'throttle', rate: { count: 60, perMs: 60_000 }, durationMs: 1_800_000 },
      },
    ]);
    expect(rules.sites).toEqual([
      {
        name: 'google',
        mx: ['*.google.com', '*.googlemail.com'],
        shape: { connectionLimit: 5, messagesPerConnection: 50, rate: { count: 1000, perMs: 60_000 } },
        automation: [
          { pattern: '4\\.7\\.28', action: { kind: 'suspend', durationMs: 3_600_000 } },
          { pattern: 'spam', action: { kind: 'suspend-source', durationMs: 90_000 } },
          { pattern: 'over quota', action: { kind: 'bounce' } },
        ],
      },
    ]);
    expect(rules.pools).toEqual([
      {
        name: 'bulk',
        streams: ['broadcast'],
        accounts: ['acc_1'],
        sources: [
          {
            address: '127.0.0.3',
            ehlo: 'mta2.example.com',
            warmup: { start: '2026-11-28', daily: [50, 100, 200, 500] },
          },
          { address: '127.0.0.4', ehlo: 'me.example', warmup: { start: '2026-11-27', daily: [0] } },
        ],
      },
      {
        name: 'transactional',
        streams: ['transactional'],
        accounts: [],
        sources: [{ address: '127.0.0.9', ehlo: 'me.example', warmup: null }],
      },
    ]);
  });

  it('an empty file is the defaults: mx-domain grouping, 3 connections, 100 messages each, no rate', () => {
    expect(parseEgressRules('')).toEqual({
      siteGrouping: 'mx-domain',
      defaults: { connectionLimit: 3, messagesPerConnection: 100, rate: null },
      automation: [],
      sites: [],
      pools: [],
    });
  });

  const refused: [string, string, RegExp][] = [
    ['an unknown top-level key', 'sitegrouping = "mx-host"', /^sitegrouping: unknown key/],
    ['an unknown key in [default]', '[default]\nconnections = 3', /^default\.connections: unknown key/],
    ['an unknown key in a site', '[site.a]\nmx = ["a.com"]\nlimit = 1', /^site\.a\.limit: unknown key/],
    [
      'an unknown key in a site rule',
      '[site.a]\nmx = ["a.com"]\n[[site.a.automation]]\nmatch = "x"\naction = "bounce"\nwhy = "y"',
      /^site\.a\.automation\[0\]\.why: unknown key/,
    ],
    [
      'an unknown key in a pool source',
      '[pool.p]\n[[pool.p.source]]\naddress = "127.0.0.1"\nname = "x"',
      /^pool\.p\.source\[0\]\.name: unknown key/,
    ],
    [
      'a bad regex',
      '[site.google]\nmx = ["*.google.com"]\n[[site.google.automation]]\nmatch = "4\\\\.7\\\\.(28"\naction = "suspend"\nduration = "1h"',
      /^site\.google\.automation\[0\]\.match: not a regular expression/,
    ],
    ['a bad rate', '[default]\nrate = "600 per minute"', /^default\.rate: "600 per minute" is not a rate/],
    ['a rate that is not a string', '[default]\nrate = 600', /^default\.rate: must be a string/],
    [
      'a bad duration',
      '[[automation]]\nmatch = "x"\naction = "suspend"\nduration = "1 hour"',
      /^automation\[0\]\.duration: "1 hour" is not a duration/,
    ],
    ['a missing duration', '[[automation]]\nmatch = "x"\naction = "suspend"', /^automation\[0\]\.duration: missing/],
    [
      'a throttle without a rate',
      '[[automation]]\nmatch = "x"\naction = "throttle"\nduration = "1h"',
      /^automation\[0\]\.rate: missing/,
    ],
    [
      'an unknown action',
      '[[automation]]\nmatch = "x"\naction = "drop"',
      /^automation\[0\]\.action: "drop" is not an action/,
    ],
    [
      'a bounce with a duration',
      '[[automation]]\nmatch = "x"\naction = "bounce"\nduration = "1h"',
      /^automation\[0\]\.duration: a bounce has no duration/,
    ],
    [
      'a source address that is not an IP',
      '[pool.p]\n[[pool.p.source]]\naddress = "mta.example.com"',
      /^pool\.p\.source\[0\]\.address: "mta\.example\.com" is not an IP address/,
    ],
    ['a pool without sources', '[pool.p]\nstreams = ["broadcast"]', /^pool\.p\.source: missing/],
    [
      'a bad warm-up date',
      '[pool.p]\n[[pool.p.source]]\naddress = "127.0.0.1"\nwarmup = { start = "2026-02-30", daily = [1] }',
      /^pool\.p\.source\[0\]\.warmup\.start: "2026-02-30" is not a date/,
    ],
    [
      'a bad warm-up count',
      '[pool.p]\n[[pool.p.source]]\naddress = "127.0.0.1"\nwarmup = { start = "2026-02-01", daily = [1, -2] }',
      /^pool\.p\.source\[0\]\.warmup\.daily\[1\]: must be a whole number/,
    ],
    [
      'a zero connection limit',
      '[default]\nconnection_limit = 0',
      /^default\.connection_limit: must be a whole number from 1/,
    ],
    ['a site without mx', '[site.a]\nrate = "1/s"', /^site\.a\.mx: missing/],
    ['a bad mx glob', '[site.a]\nmx = ["*google.com"]', /^site\.a\.mx\[0\]: "\*google\.com" is not a host name/],
    ['a bad site grouping', 'site_grouping = "mx"', /^site_grouping: "mx" is not/],
    ['a site named twice', '[site.a]\nmx = ["a.com"]\n[site.a]\nmx = ["b.com"]', /^line 3, column \d+: /],
    [
      'the same source address twice in a pool',
      '[pool.p]\n[[pool.p.source]]\naddress = "127.0.0.1"\n[[pool.p.source]]\naddress = "127.0.0.1"',
      /^pool\.p\.source\[1\]\.address: 127\.0\.0\.1 is listed twice/,
    ],
    ['broken TOML', '[default\nrate = "1/s"', /^line 1, column \d+: /],
  ];

  it.each(refused)('refuses %s, naming the key', (_what, text, message) => {
    let error: unknown;
    try {
      parseEgressRules(text);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(EgressRulesError);
    expect((error as Error).message).toMatch(message);
  });

  it('refuses a pool named in the file and in MAILER_EGRESS_POOLS', () => {
    expect(() =>
      parseEgressRules('[pool.broadcast]\n[[pool.broadcast.source]]\naddress = "127.0.0.1"', 'broadcast=127.0.0.2'),
    ).toThrow(/^pool\.broadcast: also named in MAILER_EGRESS_POOLS/);
  });

  it('refuses a bad MAILER_EGRESS_POOLS, naming it', () => {
    expect(() => parseEgressRules('', 'broadcast=not-an-ip')).toThrow(
      /^MAILER_EGRESS_POOLS: pool "broadcast": "not-an-ip" is not an IP address/,
    );
  });
});

describe('site grouping', () => {
  const rules = parseEgressRules(`
[site.google]
mx = ["*.google.com", "*.googlemail.com"]
[site.microsoft]
mx = ["*.outlook.com", "mx.hotmail.com"]
`);

  it('a *. glob stands for one or more labels, an exact name for itself', () => {
    expect(mxGlobMatches('*.google.com', 'gmail-smtp-in.l.google.com')).toBe(true);
    expect(mxGlobMatches('*.google.com', 'ALT1.Gmail-Smtp-In.L.Google.Com.')).toBe(true);
    expect(mxGlobMatches('*.google.com', 'google.com')).toBe(false);
    expect(mxGlobMatches('*.google.com', 'notgoogle.com')).toBe(false);
    expect(mxGlobMatches('mx.hotmail.com', 'mx.hotmail.com')).toBe(true);
    expect(mxGlobMatches('mx.hotmail.com', 'mx2.hotmail.com')).toBe(false);
  });

  it('a named site first (any of the MX hosts), then the first MX host by the grouping', () => {
    expect(siteOf(rules, ['aspmx.l.google.com', 'alt1.aspmx.l.google.com'])).toBe('google');
    expect(siteOf(rules, ['mx.custom.example', 'backup.googlemail.com'])).toBe('google');
    expect(siteOf(rules, ['example-com.mail.protection.outlook.com'])).toBe('microsoft');
    expect(siteOf(rules, ['mx.hotmail.com'])).toBe('microsoft');
    // mx-domain: the registrable domain of the most preferred host (tldts, the public suffix list).
    expect(siteOf(rules, ['mx1.mail.example.co.uk', 'mx.other.net'])).toBe('example.co.uk');
    expect(siteOf(rules, ['MX1.Site3.Test.'])).toBe('site3.test');
    expect(siteOf(rules, ['127.0.0.5'])).toBe('127.0.0.5');
    expect(siteOf(rules, ['localhost'])).toBe('localhost');
    expect(siteOf({ ...rules, siteGrouping: 'mx-host' }, ['mx1.mail.example.co.uk'])).toBe('mx1.mail.example.co.uk');
  });
});

describe('warm-up allowance', () => {
  const plan = { start: '2026-11-28', daily: [50, 100] };
  it('day 1 is the start day; nothing before it; no limit after the list', () => {
    expect(warmupAllowance(plan, '2026-11-27')).toBe(0);
    expect(warmupAllowance(plan, '2026-11-28')).toBe(50);
    expect(warmupAllowance(plan, '2026-11-29')).toBe(100);
    expect(warmupAllowance(plan, '2026-11-30')).toBeNull();
    expect(warmupAllowance(null, '2026-11-30')).toBeNull();
  });
});
