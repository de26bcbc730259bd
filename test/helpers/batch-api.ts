import { afterEach, beforeAll, expect } from 'vitest';
import { call, eventually, validEmail, type JsonResponse } from './http.js';
import { useStack } from './use-stack.js';

type Obj = Record<string, unknown>;
export interface BatchJob {
  job_id: string;
  total_count: number;
  sent_count: number;
  failed_count: number;
  status: string;
  created_at: string;
  completed_at?: string;
}

/**
 * A stack for the batch tests, whose receiving SMTP server refuses recipients at @refused.example
 * permanently (550 5.1.1), and the calls the tests make.
 */
export function useBatchStack() {
  const stack = useStack();
  beforeAll(async () => {
    stack.sink.refuseRecipient = (address) =>
      address.endsWith('@refused.example') ? '550 5.1.1 no such user' : undefined;
  });
  afterEach(() => {
    stack.sink.beforeAccept = async () => {};
  });

  function sendBatch(token: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonResponse> {
    return call('POST', `${stack.api}/emails/batch`, { token, body, headers });
  }

  async function sendBatchOk(token: string, emails: Obj[]): Promise<string> {
    const res = await sendBatch(token, { emails });
    expect(res.status, res.text).toBe(200);
    return res.body.job_id as string;
  }

  function getJob(id: string, token = stack.apiKey): Promise<JsonResponse<BatchJob>> {
    return call<BatchJob>('GET', `${stack.api}/emails/batch/${id}`, { token });
  }

  function listJobs(
    query: string,
    token = stack.apiKey,
  ): Promise<JsonResponse<{ batch_jobs: BatchJob[]; total_count: number; error?: string; message?: string }>> {
    return call('GET', `${stack.api}/emails/batch${query}`, { token });
  }

  async function finished(id: string, token = stack.apiKey, timeoutMs = 30_000): Promise<BatchJob> {
    return eventually(
      async () => {
        const r = await getJob(id, token);
        return r.body.status === 'completed' || r.body.status === 'failed' ? r.body : undefined;
      },
      timeoutMs,
      50,
    );
  }

  async function emailsOfJob(
    jobId: string,
    token = stack.apiKey,
  ): Promise<{ data: { id: string; subject: string; status: string; to: string[] }[]; total: number }> {
    const res = await call<{ data: { id: string; subject: string; status: string; to: string[] }[]; total: number }>(
      'GET',
      `${stack.api}/emails?job_id=${jobId}&page_size=100`,
      { token },
    );
    expect(res.status, res.text).toBe(200);
    return res.body;
  }

  const arrivedWithTag = (tag: string) =>
    stack.sink.messages.filter((m) => (m.parsed.subject ?? '').startsWith(`${tag} `));

  return { stack, sendBatch, sendBatchOk, getJob, listJobs, finished, emailsOfJob, arrivedWithTag };
}

/** n valid emails to distinct recipients, subjects `<tag> <i>`, each with what `extra(i)` adds. */
export const batchItems = (n: number, tag: string, extra: (i: number) => Obj = () => ({})) =>
  Array.from({ length: n }, (_, i) =>
    validEmail({ to: [`r${i}@example.net`], subject: `${tag} ${i}`, text: `body ${i} of ${tag}`, ...extra(i) }),
  );
