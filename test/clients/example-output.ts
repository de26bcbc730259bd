import { expect } from 'vitest';
import { call } from '../helpers/http.js';
import type { Stack } from '../helpers/stack.js';

/** What every client example sends from and to (the test stack's default account and a catcher address). */
export const SENDER = 'hello@example.com';
export const RECIPIENT = 'you@example.net';

/**
 * What a client example printed, by step: `sent <id>`, `scheduled <id>`, `batch <id>` (the examples that batch),
 * `listed <id>...` and `event <type> <email id>` lines. Each step but the events is printed exactly once.
 */
export interface ExampleSteps {
  sent: string;
  scheduled: string;
  batch?: string;
  listed: string[];
  events: string[][];
}

export function exampleSteps(output: string): ExampleSteps {
  const lines = output.trim().split('\n');
  const all = (step: string) => lines.filter((l) => l.startsWith(`${step} `) || l === step);
  const one = (step: string) => {
    const found = all(step);
    expect(found, output).toHaveLength(1);
    return found[0]!.split(' ').slice(1);
  };
  return {
    sent: one('sent')[0]!,
    scheduled: one('scheduled')[0]!,
    batch: all('batch').length ? one('batch')[0] : undefined,
    listed: one('listed'),
    events: all('event').map((l) => l.split(' ').slice(1)),
  };
}

/** One of the account's resources as the service's own REST API shows it (200 expected). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function getAs(stack: Stack, p: string): Promise<Record<string, any>> {
  const res = await call('GET', `${stack.api}${p}`, { token: stack.apiKey });
  expect(res.status, `GET ${p}: ${res.text}`).toBe(200);
  return res.body as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/** What an example created, checked against the service's own view of it. */
export async function expectExampleCreated(stack: Stack, out: ExampleSteps): Promise<void> {
  expect(await getAs(stack, `/emails/${out.sent}`)).toMatchObject({
    id: out.sent,
    from: SENDER,
    to: [RECIPIENT],
    subject: 'Hello',
    text: 'It works.',
  });
  const scheduled = await getAs(stack, `/emails/scheduled/${out.scheduled}`);
  expect(scheduled).toMatchObject({ id: out.scheduled, from: SENDER, subject: 'Later', status: 'enqueued' });
  const hence = Date.parse(scheduled.scheduled_at as string) - Date.now();
  expect(hence).toBeGreaterThan(50 * 60_000);
  expect(hence).toBeLessThanOrEqual(60 * 60_000);
  if (out.batch) {
    expect(await getAs(stack, `/emails/batch/${out.batch}`)).toMatchObject({ job_id: out.batch, total_count: 2 });
  }
  // Listed after the send: the sent email is on the first page.
  expect(out.listed).toContain(out.sent);
  // The events read are the account's first ones, in the service's order, and one is the sent email's.
  const events = await getAs(stack, `/events?limit=${out.events.length}`);
  expect(out.events).toEqual(
    (events.events as { event: string; email?: { id: string } }[]).map((e) => [e.event, e.email?.id ?? '-']),
  );
  expect(out.events.map(([, id]) => id)).toContain(out.sent);
}
