import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { errorMetadata } from '../../src/api/error-metadata.js';
import { isDatabaseUnavailable } from '../../src/db/db-unavailable.js';
import { toAppError } from '../../src/errors.js';
import { isTemporalUnavailable } from '../../src/temporal/temporal-unavailable.js';
import { freePort } from '../helpers/ports.js';

/** What the drivers really throw when nothing listens (a closed port), classified. */
async function thrown(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a failure');
}

/** The drivers against a closed port: the classification rules on made-up errors are test/unit/dependency-unavailable.test.ts. */
describe('isDatabaseUnavailable', () => {
  it('recognises the postgres library failing to connect, and toAppError answers it 503 with Retry-After', async () => {
    const sql = postgres(`postgres://u:p@127.0.0.1:${await freePort()}/db`, {
      max: 1,
      connect_timeout: 2,
      onnotice: () => {},
    });
    const err = await thrown(() => sql`select 1`);
    await sql.end({ timeout: 1 });
    expect(isDatabaseUnavailable(err)).toBe(true);
    expect(isTemporalUnavailable(err)).toBe(false);
    const app = toAppError(err);
    expect(app.status).toBe(503);
    expect(app.grpcCode).toBe(14);
    expect(app.body()).toEqual({ error: 'service unavailable', message: 'The database is unavailable; retry shortly' });
    expect(Number(new Headers(errorMetadata(app)).get('Retry-After'))).toBeGreaterThan(0);
  });
});

describe('isTemporalUnavailable', () => {
  it("recognises a workflow start that cannot reach the server, and the worker's failed connect", async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const connection = Connection.lazy({ address });
    const client = new Client({ connection });
    const startErr = await thrown(() =>
      connection.withDeadline(Date.now() + 500, () =>
        client.workflow.start('nothing', { workflowId: 'w', taskQueue: 'q' }),
      ),
    );
    await connection.close();
    expect(isTemporalUnavailable(startErr)).toBe(true);
    expect(isDatabaseUnavailable(startErr)).toBe(false);
    expect(toAppError(startErr).status).toBe(503);
    expect(toAppError(startErr).message).toMatch(/Temporal/);

    const connectErr = await thrown(() => NativeConnection.connect({ address }));
    expect(isTemporalUnavailable(connectErr)).toBe(true);
  });
});
