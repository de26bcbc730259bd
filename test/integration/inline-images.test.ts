import { describe, expect, it } from 'vitest';
import { call, eventually, validEmail } from '../helpers/http.js';
import { useStack } from '../helpers/use-stack.js';

const stack = useStack();

// The smallest PNG: what an inline part carries is opaque bytes, so any will do.
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const logo = { filename: 'logo.png', content: PNG.toString('base64'), content_type: 'image/png', content_id: 'logo' };
const report = {
  filename: 'report.txt',
  content: Buffer.from('figures').toString('base64'),
  content_type: 'text/plain',
};

describe('inline images: an attachment with a content_id', () => {
  it('arrives as an inline part (Content-ID: <logo>, in multipart/related with the html), beside an ordinary attachment', async () => {
    const html = '<p>Hi <img src="cid:logo" alt="logo"></p>';
    const res = await call('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: validEmail({ to: ['inline@example.net'], html, attachments: [logo, report] }),
    });
    expect(res.status).toBe(200);
    const id = res.body.id as string;

    const msg = await eventually(async () =>
      stack.sink.messages.find((m) => m.parsed.headers.get('x-mail-email-id') === id),
    );
    // The sink's parser resolves each cid: reference to the part with that Content-ID, as a mail client does.
    expect(msg.parsed.html).toContain(`<img src="data:image/png;base64,${PNG.toString('base64')}" alt="logo">`);
    const [image, file] = msg.parsed.attachments;
    expect(image).toMatchObject({
      filename: 'logo.png',
      contentType: 'image/png',
      contentId: '<logo>',
      related: true,
      contentDisposition: 'inline',
    });
    expect(image!.content.equals(PNG)).toBe(true);
    expect(file).toMatchObject({ filename: 'report.txt', contentDisposition: 'attachment' });
    expect(file!.related).not.toBe(true);
    expect(file!.contentId).toBeUndefined();
    expect(msg.raw.toString()).toMatch(/Content-Type: multipart\/related/);

    const detail = await call('GET', `${stack.api}/emails/${id}`, { token: stack.apiKey });
    expect(detail.body.attachments).toEqual([logo, { ...report, content_id: '' }]);
  });

  it.each([
    [
      'a duplicate',
      [logo, { ...report, content_id: 'logo' }],
      'attachments[1].content_id: "logo" is already the content_id of attachments[0]',
    ],
    [
      'angle brackets',
      [report, { ...logo, content_id: '<logo>' }],
      'attachments[1].content_id: "<logo>" may contain only printable ASCII',
    ],
    [
      'white space',
      [report, { ...logo, content_id: 'my logo' }],
      'attachments[1].content_id: "my logo" may contain only printable ASCII',
    ],
    [
      '256 characters',
      [report, { ...logo, content_id: 'x'.repeat(256) }],
      'attachments[1].content_id: length 256 exceeds the maximum of 255',
    ],
  ])('refuses %s as a 400 naming the field, and sends nothing', async (_name, attachments, message) => {
    const before = stack.sink.messages.length;
    const res = await call('POST', `${stack.api}/emails`, {
      token: stack.apiKey,
      body: validEmail({ html: '<img src="cid:logo">', attachments }),
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 'validation error', message: expect.stringContaining(message) });
    expect(stack.sink.messages.length).toBe(before);
  });
});
