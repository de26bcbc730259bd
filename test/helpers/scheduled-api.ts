import { afterAll, beforeAll, expect } from 'vitest';
import { call, type JsonResponse } from './http.js';
import { useStack } from './use-stack.js';

type Obj = Record<string, unknown>;
export interface Scheduled {
  id: string;
  from: string;
  to: string[];
  subject: string;
  scheduled_at: string;
  status: string;
  created_at: string;
  attempts: number;
}

const messageIdOf = (raw: Buffer) => /^message-id:\s*(\S+)/im.exec(raw.toString('latin1'))?.[1] ?? '';

/**
 * A stack for the scheduled-send tests, the calls they make, and when each message reached the receiving
 * server: times are measured there, on the same clock as the service. The lateness a file records is
 * reported after its tests.
 */
export function useScheduledStack() {
  const stack = useStack();
  /** When each Message-ID reached the receiving server (before its 250), by the test's clock. */
  const arrivals = new Map<string, number>();
  /** Lateness of every scheduled send that fired in this file, for the report. */
  const lateness: number[] = [];

  beforeAll(async () => {
    stack.sink.beforeAccept = async (raw) => {
      arrivals.set(messageIdOf(raw), Date.now());
    };
  });
  afterAll(async () => {
    if (lateness.length > 0) {
      const sorted = [...lateness].sort((a, b) => a - b);
      console.info(
        `scheduled sends: lateness at the receiving server over ${sorted.length} sends: ` +
          `min ${sorted[0]} ms, median ${sorted[Math.floor(sorted.length / 2)]} ms, max ${sorted[sorted.length - 1]} ms`,
      );
    }
  });

  function schedule(token: string, body: Obj, headers: Record<string, string> = {}): Promise<JsonResponse> {
    return call('POST', `${stack.api}/emails/schedule`, { token, body, headers });
  }

  async function scheduleOk(token: string, body: Obj): Promise<string> {
    const res = await schedule(token, body);
    expect(res.status, res.text).toBe(200);
    return res.body.id as string;
  }

  async function getScheduled(id: string, token = stack.apiKey): Promise<JsonResponse<Scheduled>> {
    return call<Scheduled>('GET', `${stack.api}/emails/scheduled/${id}`, { token });
  }

  function cancel(id: string, token = stack.apiKey): Promise<JsonResponse> {
    return call('DELETE', `${stack.api}/emails/scheduled/${id}`, { token });
  }

  async function listScheduled(
    query: string,
    token = stack.apiKey,
  ): Promise<JsonResponse<{ scheduled_emails: Scheduled[]; total_count: number; error?: string; message?: string }>> {
    return call('GET', `${stack.api}/emails/scheduled${query}`, { token });
  }

  /** The emails a scheduled email created (GET /emails filtered by job). */
  async function emailsOf(
    jobId: string,
    token = stack.apiKey,
  ): Promise<{ data: { id: string; subject: string; status: string }[]; total: number }> {
    const res = await call<{ data: { id: string; subject: string; status: string }[]; total: number }>(
      'GET',
      `${stack.api}/emails?job_type=scheduled&job_id=${jobId}`,
      { token },
    );
    expect(res.status, res.text).toBe(200);
    return res.body;
  }

  const arrivedWithSubject = (subject: string) => stack.sink.messages.filter((m) => m.parsed.subject === subject);

  return {
    stack,
    arrivals,
    lateness,
    schedule,
    scheduleOk,
    getScheduled,
    cancel,
    listScheduled,
    emailsOf,
    arrivedWithSubject,
  };
}
