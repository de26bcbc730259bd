import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger, resolveLogFormat } from '../../src/logger.js';

/** What a logger wrote, as text. */
function capture() {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return { stream, text: () => chunks.join('') };
}

describe('the log format', () => {
  it('auto (the default) is pretty on a terminal and JSON on anything else: CI, docker, systemd, a pipe', () => {
    const { logFormat } = loadConfig({});
    expect(logFormat).toBe('auto');
    expect(resolveLogFormat(logFormat, true)).toBe('pretty');
    expect(resolveLogFormat(logFormat, false)).toBe('json');
    // process.stdout.isTTY is undefined, not false, when stdout is not a terminal.
    expect(resolveLogFormat(logFormat, undefined)).toBe('json');
  });

  it('MAILER_LOG_FORMAT forces one or the other whatever stdout is', () => {
    const json = loadConfig({ MAILER_LOG_FORMAT: 'json' }).logFormat;
    const pretty = loadConfig({ MAILER_LOG_FORMAT: 'pretty' }).logFormat;
    expect(resolveLogFormat(json, true)).toBe('json');
    expect(resolveLogFormat(pretty, undefined)).toBe('pretty');
    expect(() => loadConfig({ MAILER_LOG_FORMAT: 'text' })).toThrow(
      'MAILER_LOG_FORMAT must be auto, json or pretty, got "text"',
    );
  });

  it('json writes one JSON object a line; pretty writes the level, the name, the message and the fields for reading', async () => {
    const json = capture();
    createLogger('info', 'test', json.stream).info({ emailId: 'em_1' }, 'email sent');
    const pretty = capture();
    createLogger('info', 'test', pretty.stream, 'pretty').info({ emailId: 'em_1' }, 'email sent');
    await new Promise((resolve) => setImmediate(resolve));

    expect(JSON.parse(json.text())).toMatchObject({ level: 30, name: 'test', msg: 'email sent', emailId: 'em_1' });
    const line = pretty.text();
    expect(() => JSON.parse(line) as unknown).toThrow();
    expect(line).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(test\): email sent\n/);
    expect(line).toContain('emailId: "em_1"');
  });
});
