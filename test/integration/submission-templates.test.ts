import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { describe, expect, it } from 'vitest';
import { call, eventually } from '../helpers/http.js';
import { freePort } from '../helpers/ports.js';
import { useStack } from '../helpers/use-stack.js';

/**
 * SMTP submission naming a template (docs/templates.md): X-Mail-Template (id or alias) with its variables as
 * JSON in X-Mail-Template-Variables, rendered as an API send with `template` is, and the headers never sent on.
 */
const stack = useStack(async () => ({ MAILER_SUBMISSION_PORT: String(await freePort()) }));

function client() {
  const url = new URL(stack.mailer.submissionUrl!);
  return nodemailer.createTransport({
    host: url.hostname,
    port: Number(url.port),
    secure: false,
    requireTLS: true,
    tls: { rejectUnauthorized: false },
    auth: { user: 'any', pass: stack.apiKey },
  } satisfies SMTPTransport.Options);
}

async function refusal(send: Promise<unknown>): Promise<string> {
  const err = (await send.then(
    () => undefined,
    (e: unknown) => e,
  )) as { response?: string } | undefined;
  if (!err) throw new Error('expected the send to be refused');
  return err.response ?? String(err);
}

const idOf = (response: string) => /queued as (em_[0-9a-z]{26})\b/.exec(response)?.[1];

describe('SMTP submission naming a template', () => {
  it('renders the template with the header variables (non-ASCII too) and sends no X-Mail-Template header on', async () => {
    const created = await call<{ id: string }>('POST', `${stack.api}/templates`, {
      token: stack.apiKey,
      body: {
        name: 'Order shipped',
        alias: 'order-shipped',
        subject: 'Order {{order}} shipped',
        html: '<p>Hi {{name}}</p>',
        text: 'Hi {{name}}',
        localizations: { de: { subject: 'Bestellung {{order}} versandt' } },
      },
    });
    expect(created.status, created.text).toBe(200);
    const info = await client().sendMail({
      from: 'app@example.com',
      to: 'zoe@example.net',
      text: '',
      headers: {
        'X-Mail-Template': 'order-shipped',
        'X-Mail-Template-Variables': JSON.stringify({ name: 'Zoë <Z>', order: 'A-17' }),
        'X-Mail-Template-Locale': 'de-AT',
      },
      attachments: [{ filename: 'invoice.txt', content: 'total 3' }],
    });
    const id = idOf(info.response)!;
    expect(id).toBeDefined();
    const detail = await call('GET', `${stack.api}/emails/${id}`, { token: stack.apiKey });
    expect(detail.body).toMatchObject({
      subject: 'Bestellung A-17 versandt',
      html: '<p>Hi Zoë &lt;Z&gt;</p>',
      text: 'Hi Zoë <Z>',
      template: { id: created.body.id, version: 1, locale: 'de-AT' },
    });
    expect(Object.keys(detail.body.headers as object).filter((h) => /^x-mail-template/i.test(h))).toEqual([]);
    const arrived = await eventually(async () =>
      stack.sink.messages.find((m) => m.envelopeTo.includes('zoe@example.net')),
    );
    expect(arrived.parsed.subject).toBe('Bestellung A-17 versandt');
    expect(arrived.raw.toString()).not.toMatch(/^x-mail-template/im);
    expect(arrived.parsed.attachments.map((a) => a.filename)).toEqual(['invoice.txt']);
  });

  it('refuses content beside a template, bad variables, a stray header and an unknown template, naming the header', async () => {
    const base = { from: 'app@example.com', to: 'r@example.net' };
    expect(
      await refusal(
        client().sendMail({ ...base, subject: 'mine', text: '', headers: { 'X-Mail-Template': 'order-shipped' } }),
      ),
    ).toMatch(/^5\d\d .*must have no Subject and an empty body/);
    expect(
      await refusal(
        client().sendMail({
          ...base,
          text: '',
          headers: { 'X-Mail-Template': 'order-shipped', 'X-Mail-Template-Variables': '["a"]' },
        }),
      ),
    ).toMatch(/^5\d\d .*X-Mail-Template-Variables must be a JSON object/i);
    expect(
      await refusal(
        client().sendMail({ ...base, subject: 's', text: 't', headers: { 'X-Mail-Template-Locale': 'de' } }),
      ),
    ).toMatch(/^5\d\d .*x-mail-template-locale needs x-mail-template/i);
    expect(
      await refusal(client().sendMail({ ...base, text: '', headers: { 'X-Mail-Template': 'no-such-template' } })),
    ).toMatch(/^5\d\d .*template\.id: no template no-such-template/);
    expect(
      await refusal(
        client().sendMail({
          ...base,
          text: '',
          headers: { 'X-Mail-Template': 'order-shipped', 'X-Mail-Template-Variables': '{"name":"x"}' },
        }),
      ),
    ).toMatch(/^5\d\d .*template\.variables\.order is required/);
  });
});
