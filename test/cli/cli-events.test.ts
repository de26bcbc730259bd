import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { call, eventually, validEmail } from '../helpers/http.js';
import { ADMIN_TOKEN } from '../helpers/stack.js';
import { BIN, useCli } from '../helpers/use-cli.js';

/**
 * `mailer events tail` and `events list` as a user runs them (bin/run.js in a child process) against the
 * real service, compared with what GET /v1/mail/events answers.
 */
const cli = useCli();
const { stack, mailer, ok } = cli;

type ApiEvent = { id: string; event: string; email: { id: string } };
type ApiPage = { events: ApiEvent[]; next_cursor: string };

const feed = async (query = ''): Promise<ApiPage> =>
  (await call<ApiPage>('GET', `${stack.api}/events${query}`, { token: stack.apiKey })).body;

/** Sends one email and waits until its send and delivery events are in the feed; answers its id. */
async function sendSettled(subject: string): Promise<string> {
  const res = await call<{ id: string }>('POST', `${stack.api}/emails`, {
    token: stack.apiKey,
    body: validEmail({ subject }),
  });
  expect(res.status).toBe(200);
  await eventually(
    async () => (await feed('?limit=1000')).events.filter((e) => e.email.id === res.body.id).length === 2,
  );
  return res.body.id;
}

const jsonLines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as ApiEvent);

describe('events', () => {
  it('tail --no-follow prints every event oldest first, as the API has them, and the cursor to resume from', async () => {
    await sendSettled('tail one');
    await sendSettled('tail two');
    const api = await feed();
    const r = await ok(['events', 'tail', '--no-follow', '--json']);
    expect(jsonLines(r.stdout)).toEqual(api.events);
    expect(r.stderr.trim()).toBe(`cursor ${api.next_cursor}`);

    const human = await ok(['events', 'tail', '--no-follow', '--type', 'delivery']);
    const lines = human.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    for (const [i, e] of api.events.filter((x) => x.event === 'delivery').entries()) {
      expect(lines[i]).toMatch(new RegExp(`^\\S+Z {2}delivery {2}.*${e.email.id} {2}rcpt@example\\.net {2}${e.id}$`));
    }
  });

  it('tail follows new events from a cursor; --count stops it', async () => {
    const { next_cursor: cursor } = await feed('?limit=1000');
    const tail = mailer(['events', 'tail', '--after', cursor, '--count', '2', '--interval', '200', '--json']);
    const id = await sendSettled('followed');
    const r = await tail;
    expect(r.code, r.stderr).toBe(0);
    expect(jsonLines(r.stdout).map((e) => [e.email.id, e.event])).toEqual([
      [id, 'send'],
      [id, 'delivery'],
    ]);
    expect(r.stderr.trim()).toBe(`cursor ${(await feed(`?after=${cursor}`)).next_cursor}`);
  });

  it('Ctrl-C stops a tail that waits for events, and it prints the cursor', async () => {
    const { next_cursor: cursor } = await feed('?limit=1000');
    const child = spawn(process.execPath, [BIN, 'events', 'tail', '--after', cursor, '--interval', '200'], {
      cwd: cli.workDir,
      env: {
        ...process.env,
        MAILER_URL: `http://${stack.grpcAddress}`,
        MAILER_API_KEY: stack.apiKey,
        MAILER_ADMIN_TOKEN: ADMIN_TOKEN,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const id = await sendSettled('interrupted');
    await eventually(async () => stdout.includes('delivery'), 20_000);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(
      stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/ {2,}/)[1]),
    ).toEqual(['send', 'delivery']);
    expect(stdout).toContain(id);
    expect(stderr.trim()).toBe(`cursor ${(await feed(`?after=${cursor}`)).next_cursor}`);
  });

  it("--email keeps to one email's events, as GET /events?email_id= does; an unknown email is an error", async () => {
    const id = await sendSettled('one of two');
    await sendSettled('the other');
    const api = await feed(`?email_id=${id}`);
    expect(api.events.map((e) => [e.email.id, e.event])).toEqual([
      [id, 'send'],
      [id, 'delivery'],
    ]);
    const tail = await ok(['events', 'tail', '--no-follow', '--json', '--email', id]);
    expect(jsonLines(tail.stdout)).toEqual(api.events);
    const list = await ok(['events', 'list', '--email', id, '--type', 'delivery']);
    const lines = list.stdout.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(api.events[1]!.id);
    const unknown = await mailer(['events', 'list', '--email', 'em_nope']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('not found: email em_nope not found');
  });

  it('list prints one page and the next cursor; bad flags are usage errors', async () => {
    const page = await feed('?limit=1');
    const r = await ok(['events', 'list', '--limit', '1']);
    expect(r.stdout).toContain(page.events[0]!.id);
    expect(r.stdout.trim().split('\n').at(-1)).toBe(`next_cursor  ${page.next_cursor}`);
    expect((await mailer(['events', 'list', '--limit', '5000'])).code).toBe(2);
    expect((await mailer(['events', 'tail', '--type', 'sent'])).code).toBe(2);
    const bad = await mailer(['events', 'list', '--after', 'nonsense']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('validation error: after must be empty or a next_cursor');
  });
});
