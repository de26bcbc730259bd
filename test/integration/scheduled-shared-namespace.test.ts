import { describe, expect, it } from 'vitest';
import { call, eventually, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * Two deployments on one Temporal namespace, each with its own task queue and database (as two services
 * sharing a Temporal cluster run). A scheduled second's workflow is named by its second: without the task
 * queue in the name, the second deployment's start for the same second is refused as already started, and
 * its email waits for the overdue sweep (5 s late at least) instead of firing at its time.
 */
const first = useStack();
const second = useStack();

describe('scheduled sends of deployments sharing a Temporal namespace', () => {
  it('emails due in the same second fire on time in each deployment', async () => {
    // Mid-second, 3 s out: both fall in the same second's workflow id if it names the second alone.
    const due = Math.floor((Date.now() + 3_000) / 1000) * 1000 + 500;
    const at = new Date(due).toISOString();
    const subject = `shared second ${due}`;
    for (const stack of [first, second]) {
      const res = await call('POST', `${stack.api}/emails/schedule`, {
        token: stack.apiKey,
        body: { ...validEmail({ subject }), scheduled_at: at },
      });
      expect(res.status, res.text).toBe(200);
    }
    const arrivedAt = async (stack: typeof first) => {
      await eventually(async () => stack.sink.messages.some((m) => m.parsed.subject === subject), 10_000, 10);
      return Date.now();
    };
    const [a, b] = await Promise.all([arrivedAt(first), arrivedAt(second)]);
    for (const arrived of [a, b]) {
      expect(arrived).toBeGreaterThanOrEqual(due);
      expect(arrived - due).toBeLessThan(3_000);
    }
  });
});
