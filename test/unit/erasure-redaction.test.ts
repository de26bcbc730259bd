import { describe, expect, it } from 'vitest';
import {
  ERASED_ADDRESS,
  mentionsAddress,
  redactAddresses,
  redactJson,
  redactMailboxes,
  redactText,
} from '../../src/domain/erasure.js';

const ADDRESS = 'Jane.Doe@Example.com';

describe('erasure redaction', () => {
  it('replaces the address in any case, and only it', () => {
    expect(redactText('550 5.1.1 <JANE.DOE@example.COM>: unknown; cc jane.doe@example.com.org', ADDRESS)).toBe(
      `550 5.1.1 <${ERASED_ADDRESS}>: unknown; cc ${ERASED_ADDRESS}.org`,
    );
    expect(redactText('janeXdoe@example.com', ADDRESS)).toBe('janeXdoe@example.com');
    expect(redactAddresses(['a@x.org', 'jane.doe@EXAMPLE.com'], ADDRESS)).toEqual(['a@x.org', ERASED_ADDRESS]);
  });

  it('drops the display name with the address, and keeps other mailboxes as they were', () => {
    const m = {
      from: { name: 'Shop', address: 'shop@x.org' },
      to: [
        { name: 'Jane Doe', address: 'jane.doe@example.com' },
        { name: 'Bob', address: 'bob@x.org' },
      ],
      cc: [],
      bcc: [{ name: '', address: 'JANE.DOE@example.com' }],
      replyTo: [],
    };
    expect(redactMailboxes(m, ADDRESS)).toEqual({
      from: m.from,
      to: [{ name: '', address: ERASED_ADDRESS }, m.to[1]],
      cc: [],
      bcc: [{ name: '', address: ERASED_ADDRESS }],
      replyTo: [],
    });
  });

  it('walks JSON: mailboxes lose their name, strings and keys their mentions; other values stay', () => {
    const data = {
      bounced_recipients: [
        { email_address: 'jane.doe@example.com', status: '5.1.1', diagnostic_code: 'no jane.doe@example.com here' },
      ],
      to: [{ name: 'Jane', address: 'Jane.Doe@example.com' }],
      count: 3,
      ok: true,
      none: null,
      'jane.doe@example.com': 'x',
    };
    const redacted = redactJson(data, ADDRESS);
    expect(redacted).toEqual({
      bounced_recipients: [
        { email_address: ERASED_ADDRESS, status: '5.1.1', diagnostic_code: `no ${ERASED_ADDRESS} here` },
      ],
      to: [{ name: '', address: ERASED_ADDRESS }],
      count: 3,
      ok: true,
      none: null,
      [ERASED_ADDRESS]: 'x',
    });
    expect(mentionsAddress(data, ADDRESS)).toBe(true);
    expect(mentionsAddress(redacted, ADDRESS)).toBe(false);
  });
});
