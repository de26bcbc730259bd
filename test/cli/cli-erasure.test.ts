import { describe, expect, it } from 'vitest';
import { call, eventually, validEmail } from '../helpers/http.js';
import { useCli } from '../helpers/use-cli.js';

/** `mailer emails erase` and `mailer recipients erase` as an operator runs them, against the real service. */
const { stack, mailer, json, ok } = useCli();

async function sendDelivered(to: string): Promise<string> {
  const res = await call<{ id: string }>('POST', `${stack.api}/emails`, {
    token: stack.apiKey,
    body: validEmail({ to: [to], subject: 'Private' }),
  });
  await eventually(
    async () =>
      (await call<{ status: string }>('GET', `${stack.api}/emails/${res.body.id}`, { token: stack.apiKey })).body
        .status === 'delivered',
    30_000,
    100,
  );
  return res.body.id;
}

describe('erasure', () => {
  it("emails erase drops one email's content; recipients erase every trace of an address", async () => {
    const id = await sendDelivered('cli.erase@example.net');
    expect(await json(['emails', 'erase', id])).toMatchObject({ emails: 1 });
    expect(await json<{ subject: string; to: string[] }>(['emails', 'get', id])).toMatchObject({
      subject: '',
      to: ['cli.erase@example.net'],
    });

    const shown = await ok(['recipients', 'erase', 'CLI.Erase@example.net', '--account', stack.accountId]);
    expect(shown.stdout).toContain(`Erased the address in ${stack.accountId}`);
    expect(shown.stdout).toMatch(/^emails\s+1$/m);
    expect(await json<{ to: string[] }>(['emails', 'get', id])).toMatchObject({ to: ['erased@erased.invalid'] });
    expect(await json(['recipients', 'erase', 'cli.erase@example.net'])).toMatchObject({
      emails: 0,
      skipped_pending: 0,
    });
  });

  it('refuses what is not one bare address, and an unknown email', async () => {
    const bad = await mailer(['recipients', 'erase', 'Jane <jane@example.net>']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^validation error: address/);
    const missing = await mailer(['emails', 'erase', 'em_nonexistent']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^not found: /);
  });
});
