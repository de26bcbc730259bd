import { describe, expect, it } from 'vitest';
import { dmarcAt, dmarcNames, NO_DMARC } from '../../src/domain/dmarc.js';

describe('the DMARC policy covering a domain', () => {
  it('is looked for at the domain, then at each parent down to two labels', () => {
    expect(dmarcNames('example.com')).toEqual(['_dmarc.example.com']);
    expect(dmarcNames('mail.news.example.com')).toEqual([
      '_dmarc.mail.news.example.com',
      '_dmarc.news.example.com',
      '_dmarc.example.com',
    ]);
  });

  it("reads p= at the domain's own name, sp= (else p=) at a parent's", () => {
    const own = dmarcAt('_dmarc.example.com', ['v=spf1 -all', 'v=DMARC1; p=reject; sp=none; rua=mailto:d@x'], false);
    expect(own).toEqual({ published: true, policy: 'reject', recordName: '_dmarc.example.com' });
    expect(dmarcAt('_dmarc.example.com', ['v=DMARC1; p=reject; sp=none'], true)).toMatchObject({ policy: 'none' });
    expect(dmarcAt('_dmarc.example.com', ['V=dmarc1;P=Quarantine'], true)).toMatchObject({ policy: 'quarantine' });
  });

  it('goes further up only when the name holds no DMARC record; two records or no valid policy are none', () => {
    expect(dmarcAt('_dmarc.example.com', [], false)).toBeUndefined();
    expect(dmarcAt('_dmarc.example.com', ['v=spf1 -all', 'something else'], false)).toBeUndefined();
    expect(dmarcAt('_dmarc.example.com', ['v=DMARC1; p=none', 'v=DMARC1; p=reject'], false)).toEqual(NO_DMARC);
    expect(dmarcAt('_dmarc.example.com', ['v=DMARC1; rua=mailto:d@x'], false)).toEqual(NO_DMARC);
    expect(dmarcAt('_dmarc.example.com', ['v=DMARC1; p=block'], false)).toEqual(NO_DMARC);
  });
});
