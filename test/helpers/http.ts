/** Small JSON-over-HTTP helpers on fetch, for tests against the real gateway. */
import { expect } from 'vitest';

export interface JsonResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function call<T = Record<string, unknown>>(
  method: string,
  url: string,
  options: { token?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) body = JSON.stringify(options.body);
  if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type'))
    headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // Not JSON: the test reads `text`.
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

/** Polls `fn` until it returns a truthy value or the time is up. */
export async function eventually<T>(
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`condition not met in ${timeoutMs} ms${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export const validEmail = (overrides: Record<string, unknown> = {}) => ({
  from: 'Sender <sender@example.com>',
  to: ['rcpt@example.net'],
  subject: 'Hello',
  text: 'Hello there',
  ...overrides,
});

/** Expects the spec's 400 `validation error` with a message matching `message`; `what` names the case. */
export function expectValidationError(res: JsonResponse, what: string, message: RegExp): void {
  expect(res.status, `${what}: ${res.text}`).toBe(400);
  expect(res.body.error, what).toBe('validation error');
  expect(res.body.message, what).toMatch(message);
}
