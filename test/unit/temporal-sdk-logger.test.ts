import { Writable } from 'node:stream';
import { ApplicationFailure } from '@temporalio/activity';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { sdkLogger } from '../../src/temporal/sdk-runtime.js';

/** The JSON lines a logger wrote. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n'))
        if (line.trim() !== '') lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger('info', 'test', stream) };
}

describe('the Temporal SDK logger', () => {
  it('writes an activity failure with its message, type and cause (the SDK names it `error`: it used to be written {})', async () => {
    const { lines, logger } = capture();
    const failure = ApplicationFailure.create({
      message: 'the DKIM key of example.com (selector s1) cannot be opened',
      type: 'internal',
      cause: new Error('a sealed value failed authentication for dkim_keys.private_key_sealed/dk_1'),
    });
    // As node_modules/@temporalio/worker/lib/activity.js logs it, with the activity's attributes composed in.
    sdkLogger(logger).log('WARN', 'Activity failed', { error: failure, durationMs: 4, activityType: 'deliverChunk' });
    sdkLogger(logger).warn('Activity failed', { error: new Error('plain') });
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(2);
    const [line, plain] = lines as [Record<string, unknown>, Record<string, unknown>];
    expect(line).toMatchObject({ msg: 'Activity failed', level: 40, durationMs: 4, activityType: 'deliverChunk' });
    expect(line).not.toHaveProperty('error');
    const err = line.err as { type: string; message: string; stack: string };
    expect(err.type).toBe('ApplicationFailure');
    expect(err.message).toBe(
      'the DKIM key of example.com (selector s1) cannot be opened: a sealed value failed authentication for dkim_keys.private_key_sealed/dk_1',
    );
    expect(err.stack).toContain('caused by: Error: a sealed value failed authentication');
    expect(plain.err).toMatchObject({ type: 'Error', message: 'plain' });
  });

  it('passes other metadata as it is, and logs nothing below warn', async () => {
    const { lines, logger } = capture();
    sdkLogger(logger).log('ERROR', 'Worker failed', { taskQueue: 'mail' });
    sdkLogger(logger).log('INFO', 'Worker started', { taskQueue: 'mail' });
    sdkLogger(logger).info('Worker started');
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toEqual([expect.objectContaining({ msg: 'Worker failed', level: 50, taskQueue: 'mail' })]);
  });
});
