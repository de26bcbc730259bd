import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { BUILT_IN_RULES_PATH, loadEgressRules } from '../../src/delivery/egress/rules-file.js';
import { createEgressRulesSource } from '../../src/delivery/egress/rules-source.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'egress-rules-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const logs: { level: string; msg: string; error?: string }[] = [];
const logger = {
  info: (obj: object, msg: string) => logs.push({ level: 'info', msg, ...obj }),
  error: (obj: object, msg: string) => logs.push({ level: 'error', msg, ...obj }),
};

describe('the built-in rules file (config/egress-rules.toml)', () => {
  it('parses, with the big providers and no pools', () => {
    const loaded = loadEgressRules(undefined, undefined);
    expect(loaded.error).toBeNull();
    expect(loaded.path).toBe(BUILT_IN_RULES_PATH);
    expect(loaded.path.endsWith(path.join('config', 'egress-rules.toml'))).toBe(true);
    const { rules } = loaded;
    expect(rules.sites.map((s) => s.name)).toEqual(expect.arrayContaining(['google', 'microsoft', 'yahoo', 'icloud']));
    expect(rules.pools).toEqual([]);
    const site = (name: string) => rules.sites.find((s) => s.name === name)!;
    expect(site('google').mx).toEqual(['*.google.com', '*.googlemail.com']);
    const act = (name: string, reply: string) =>
      [...site(name).automation, ...rules.automation].find((r) => new RegExp(r.pattern, 'i').test(reply))?.action
        .kind ?? null;
    expect(act('google', '421 4.7.28 [192.0.2.1] Our system has detected an unusual rate of unsolicited mail')).toBe(
      'throttle',
    );
    expect(
      act(
        'microsoft',
        '451 4.7.650 The mail server [192.0.2.1] has been temporarily rate limited due to IP reputation.',
      ),
    ).toBe('throttle');
    expect(act('microsoft', '451 4.7.500 Server busy. Please try again later from [192.0.2.1]. (S77719)')).toBe(
      'suspend-source',
    );
    expect(
      act('yahoo', '421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to unexpected volume'),
    ).toBe('suspend');
    expect(act('yahoo', '421 4.7.0 [TS01] Messages from 192.0.2.1 temporarily deferred')).toBe('suspend-source');
    expect(act('icloud', '421 [HCM1] Your mail from 192.0.2.1 was deferred.')).toBe('suspend-source');
    expect(act('google', '550 5.7.1 Service unavailable, client host blocked using zen.spamhaus.org')).toBeNull();
  });

  it('MAILER_EGRESS_POOLS adds its pools to it', () => {
    const { rules, error } = loadEgressRules(undefined, 'broadcast=127.0.0.3/mta3.example.com');
    expect(error).toBeNull();
    expect(rules.pools).toEqual([
      {
        name: 'broadcast',
        streams: ['broadcast'],
        accounts: [],
        sources: [{ address: '127.0.0.3', ehlo: 'mta3.example.com', warmup: null }],
      },
    ]);
  });

  it('a file that is missing or refused answers its error, with the built-in rules', () => {
    const missing = loadEgressRules(path.join(dir, 'none.toml'), undefined);
    expect(missing.error).toBe('the file does not exist');
    expect(missing.rules.sites.some((s) => s.name === 'google')).toBe(true);
    fs.writeFileSync(path.join(dir, 'bad.toml'), '[default]\nrate = "fast"\n');
    expect(loadEgressRules(path.join(dir, 'bad.toml'), undefined).error).toMatch(
      /^default\.rate: "fast" is not a rate/,
    );
  });
});

describe('rules reloaded without a restart', () => {
  it('sees a changed file within 2 s, keeps the rules in force when the file breaks, and re-reads on SIGHUP', async () => {
    const file = path.join(dir, 'rules.toml');
    fs.writeFileSync(file, '[default]\nconnection_limit = 4\n');
    const source = createEgressRulesSource({ path: file, poolsSetting: undefined, logger });
    try {
      expect(source.path).toBe(file);
      expect(source.error()).toBeNull();
      expect(source.current().defaults.connectionLimit).toBe(4);

      fs.writeFileSync(file, '[default]\nconnection_limit = 7\nrate = "60/min"\n');
      await vi.waitFor(() => expect(source.current().defaults.connectionLimit).toBe(7), {
        timeout: 5000,
        interval: 100,
      });
      expect(source.current().defaults.rate).toEqual({ count: 60, perMs: 60_000 });
      expect(logs.at(-1)).toMatchObject({ level: 'info', msg: 'egress rules reloaded' });

      fs.writeFileSync(file, '[default]\nconnection_limit = "many"\n');
      await vi.waitFor(() => expect(source.error()).toMatch(/^default\.connection_limit: must be a whole number/), {
        timeout: 5000,
        interval: 100,
      });
      expect(source.current().defaults.connectionLimit).toBe(7);
      expect(logs.at(-1)).toMatchObject({
        level: 'error',
        msg: 'egress rules file refused: the rules in force are kept',
      });

      // SIGHUP reads it at once, changed or not (the stamp is not consulted).
      const polled = createEgressRulesSource({ path: file, poolsSetting: undefined, logger, checkEveryMs: 0 });
      try {
        fs.writeFileSync(file, '[default]\nconnection_limit = 9\n');
        expect(polled.current().defaults.connectionLimit).toBe(3); // built-in while the file was broken
        process.kill(process.pid, 'SIGHUP');
        await vi.waitFor(() => expect(polled.current().defaults.connectionLimit).toBe(9), {
          timeout: 2000,
          interval: 20,
        });
        expect(polled.error()).toBeNull();
      } finally {
        polled.close();
      }
    } finally {
      source.close();
    }
  });
});
