/**
 * The one email every measurement sends: a typical transactional message (a password reset) of about
 * 2 KB, HTML and text parts, two tags. The HTTP runs POST it as the spec's JSON; the raw nodemailer
 * baseline sends the MIME message the service would compose from it.
 */
export const SENDER_DOMAIN = 'example.com';

const text = [
  'Hello,',
  '',
  'Someone asked to reset the password of your account. If it was you, open the link below within the next',
  'hour to choose a new password. If it was not you, you can ignore this message: your password stays as it is.',
  '',
  'https://app.example.com/reset?token=3f0c1a5e9b7d4c2a8e6f1b3d5c7a9e0f2b4d6c8a0e2f4b6d8c0a2e4f6b8d0c2a',
  '',
  'Thanks,',
  'The Example team',
].join('\n');

const html = `<!doctype html><html><body style="font-family:sans-serif;color:#222">
<p>Hello,</p>
<p>Someone asked to reset the password of your account. If it was you, open the link below within the next
hour to choose a new password. If it was not you, you can ignore this message: your password stays as it is.</p>
<p><a href="https://app.example.com/reset?token=3f0c1a5e9b7d4c2a8e6f1b3d5c7a9e0f2b4d6c8a0e2f4b6d8c0a2e4f6b8d0c2a"
style="display:inline-block;padding:10px 16px;background:#2563eb;color:#fff;text-decoration:none;border-radius:6px">Reset my password</a></p>
<p>Thanks,<br>The Example team</p>
</body></html>`;

export const EMAIL_REQUEST = {
  from: `Example <no-reply@${SENDER_DOMAIN}>`,
  to: ['someone@example.net'],
  subject: 'Reset your password',
  html,
  text,
  tags: { category: 'password_reset', env: 'bench' },
};

export const EMAIL_BODY = JSON.stringify(EMAIL_REQUEST);
