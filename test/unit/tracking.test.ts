import crypto from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import type { HitOutcome, TrackingHit, TrackingRules } from '../../src/domain/entities/tracking.js';
import {
  createLinkTracker,
  decodeAttribute,
  MAX_LINK_BYTES,
  MAX_TRACKED_LINKS,
} from '../../src/delivery/message/tracking.js';
import { createTrackingService, MAX_TRACKING_EVENTS_PER_EMAIL } from '../../src/services/tracking-service.js';

/** CPU time since `start`, in ms: on a shared machine wall time also measures the waiting. */
const cpuMs = (start: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};

const BASE = 'https://track.example';
const KEY = crypto.randomBytes(32).toString('base64url');
const ID = 'em_01jtestemail0000000000000a';
const tracker = createLinkTracker({ baseUrl: BASE, key: KEY });
const CLICK = { open: false, click: true };
const OPEN = { open: true, click: false };

const tokenOf = (url: string) => url.slice(url.lastIndexOf('/') + 1);
/** The hrefs of a rewritten HTML (double-quoted ones). */
const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!);
/** What the click endpoint would do with the href: the link it was signed for. */
const linkOf = (href: string) => tracker.verifyClick(tokenOf(decodeAttribute(href)))?.link;

describe('click tracking: which links are rewritten', () => {
  it('rewrites http and https links to signed URLs under the public URL, keeping the rest of the HTML byte for byte', () => {
    const html =
      '<p>Hi <a class="x" href="https://example.org/a">A</a> and <a href="http://example.org/b" target="_blank">B</a></p>';
    const out = tracker.rewrite(html, ID, CLICK);
    const [a, b] = hrefs(out);
    expect(a).toMatch(/^https:\/\/track\.example\/t\/c\/[A-Za-z0-9_-]+$/);
    expect(linkOf(a!)).toBe('https://example.org/a');
    expect(linkOf(b!)).toBe('http://example.org/b');
    expect(out).toBe(`<p>Hi <a class="x" href="${a}">A</a> and <a href="${b}" target="_blank">B</a></p>`);
  });

  it('leaves mailto:, tel:, anchors, relative and other schemes alone', () => {
    const html = [
      '<a href="mailto:a@example.org">m</a>',
      '<a href="tel:+15551234">t</a>',
      '<a href="#top">#</a>',
      '<a href="/relative">r</a>',
      '<a href="javascript:alert(1)">j</a>',
      '<a href="ftp://example.org/f">f</a>',
      '<a href="">e</a>',
      '<a name="x">n</a>',
      '<a href>h</a>',
      '<a href="https://">bad</a>',
    ].join('');
    expect(tracker.rewrite(html, ID, CLICK)).toBe(html);
  });

  it('keeps the quoting of each href: double, single, unquoted, any case', () => {
    const out = tracker.rewrite(
      `<A HREF='https://example.org/s'>s</A> <a href=https://example.org/u>u</a> <a href = "https://example.org/d">d</a>`,
      ID,
      CLICK,
    );
    const single = /<A HREF='([^']+)'>s<\/A>/.exec(out)![1]!;
    const unquoted = /<a href=([^ >]+)>u<\/a>/.exec(out)![1]!;
    const double = /<a href = "([^"]+)">d<\/a>/.exec(out)![1]!;
    expect([linkOf(single), linkOf(unquoted), linkOf(double)]).toEqual([
      'https://example.org/s',
      'https://example.org/u',
      'https://example.org/d',
    ]);
  });

  it('decodes entities in hrefs for the link it signs, as a browser reads the attribute', () => {
    const cases: [string, string][] = [
      ['https://example.org/p?a=1&amp;b=2', 'https://example.org/p?a=1&b=2'],
      ['https://example.org/p?a=1&#38;b=2&#x26;c=3', 'https://example.org/p?a=1&b=2&c=3'],
      ['https://example.org/p?a=1&amp b', 'https://example.org/p?a=1& b'],
      // A legacy reference without `;` before `=` or a letter stays text in an attribute.
      ['https://example.org/p?a=1&copy=2&ampx=3', 'https://example.org/p?a=1&copy=2&ampx=3'],
      ['  https://example.org/trimmed\n', 'https://example.org/trimmed'],
      ['https://example.org/&#0;&#x110000;', 'https://example.org/\ufffd\ufffd'],
    ];
    for (const [raw, link] of cases) {
      const [href] = hrefs(tracker.rewrite(`<a href="${raw}">x</a>`, ID, CLICK));
      expect(linkOf(href!), raw).toBe(link);
    }
  });

  it('reads tags as HTML does: a > inside quotes, an <a> inside another attribute, the first of two hrefs', () => {
    const html =
      '<img alt="<a href=\'https://example.org/not-a-link\'>"><a title="1 > 0" href="https://example.org/x" href="https://example.org/y">x</a>';
    const out = tracker.rewrite(html, ID, CLICK);
    expect(out).toContain(`<img alt="<a href='https://example.org/not-a-link'>">`);
    const [first, second] = hrefs(out);
    expect(linkOf(first!)).toBe('https://example.org/x');
    expect(second).toBe('https://example.org/y');
    expect(
      tracker.rewrite('<abbr href="https://example.org/">a</abbr><area href="https://example.org/">', ID, CLICK),
    ).toContain('href="https://example.org/"');
  });

  it('leaves a tag that never closes alone', () => {
    const html = '<p>text <a href="https://example.org/x" title="never closed';
    expect(tracker.rewrite(html, ID, CLICK)).toBe(html);
  });

  it('leaves a link alone that opts out with data-mailer-track="false"', () => {
    const html =
      '<a data-mailer-track="false" href="https://example.org/private">p</a><a href="https://example.org/p2" DATA-MAILER-TRACK=FALSE>q</a>';
    expect(tracker.rewrite(html, ID, CLICK)).toBe(html);
    const tracked = tracker.rewrite('<a data-mailer-track="true" href="https://example.org/t">t</a>', ID, CLICK);
    expect(linkOf(hrefs(tracked)[0]!)).toBe('https://example.org/t');
  });

  it('leaves links that are already tracking links alone, so rewriting twice changes nothing', () => {
    const html = '<html><body><a href="https://example.org/a?x=1&amp;y=2">a</a></body></html>';
    const once = tracker.rewrite(html, ID, { open: true, click: true });
    expect(tracker.rewrite(once, ID, { open: true, click: true })).toBe(once);
    const foreign = `<a href="${tracker.clickUrl('em_other', 'https://example.org/z')}">z</a>`;
    expect(tracker.rewrite(foreign, ID, CLICK)).toBe(foreign);
  });
});

describe('click tracking: which links are rewritten', () => {
  it('leaves links longer than the limit alone, and signs each distinct link once up to the limit per email', () => {
    const long = `https://example.org/${'a'.repeat(MAX_LINK_BYTES)}`;
    expect(tracker.rewrite(`<a href="${long}">l</a>`, ID, CLICK)).toBe(`<a href="${long}">l</a>`);
    const same = tracker.rewrite(
      '<a href="https://example.org/s">1</a><a href="https://example.org/s">2</a>',
      ID,
      CLICK,
    );
    expect(new Set(hrefs(same)).size).toBe(1);
    const many = Array.from(
      { length: MAX_TRACKED_LINKS + 1 },
      (_, i) => `<a href="https://example.org/${i}">${i}</a>`,
    ).join('');
    const out = hrefs(tracker.rewrite(many, ID, CLICK));
    expect(out.filter((h) => h.startsWith(BASE))).toHaveLength(MAX_TRACKED_LINKS);
    expect(out.at(-1)).toBe(`https://example.org/${MAX_TRACKED_LINKS}`);
  });

  it('changes nothing when both are off', () => {
    const html = '<html><body><a href="https://example.org/">x</a></body></html>';
    expect(tracker.rewrite(html, ID, { open: false, click: false })).toBe(html);
  });

  it('uses the public URL without its trailing slash, query or fragment, escaped for HTML', () => {
    const t = createLinkTracker({ baseUrl: "https://t.example/mail/o'k&/?q=1#f", key: KEY });
    const out = t.rewrite('<a href="https://example.org/">x</a>', ID, CLICK);
    expect(out).toMatch(/^<a href="https:\/\/t\.example\/mail\/o&#39;k&amp;\/t\/c\/[A-Za-z0-9_-]+">x<\/a>$/);
    expect(t.verifyClick(tokenOf(hrefs(out)[0]!))?.link).toBe('https://example.org/');
  });
});

describe('open tracking: the pixel', () => {
  const pixel = (html: string) => /<img src="([^"]+)" width="1" height="1" alt="" style="[^"]+">/.exec(html);

  it('goes just before the last </body>, whatever its case', () => {
    const out = tracker.rewrite('<html><body><p>x</p><!-- </body> --></BODY ></html>', ID, OPEN);
    const m = pixel(out)!;
    expect(out).toBe(`<html><body><p>x</p><!-- </body> -->${m[0]}</BODY ></html>`);
    expect(m[1]).toBe(tracker.pixelUrl(ID));
    expect(tracker.verifyOpen(tokenOf(m[1]!))).toBe(ID);
  });

  it('is appended to HTML without a body, and added once however often the HTML is rewritten', () => {
    const out = tracker.rewrite('<p>fragment</p>', ID, OPEN);
    expect(out.startsWith('<p>fragment</p><img src="https://track.example/t/o/')).toBe(true);
    expect(tracker.rewrite(out, ID, OPEN)).toBe(out);
  });
});

describe('tokens', () => {
  const link = 'https://example.org/x';
  const click = tokenOf(tracker.clickUrl(ID, link));
  const open = tokenOf(tracker.pixelUrl(ID));
  /** A token with this payload and the mac of another. */
  const withPayload = (token: string, payload: string) => {
    const mac = Buffer.from(token, 'base64url').subarray(-16);
    return Buffer.concat([Buffer.from(payload), mac]).toString('base64url');
  };

  it('verify what they were signed for, and serialize the link for the redirect', () => {
    expect(tracker.verifyOpen(open)).toBe(ID);
    expect(tracker.verifyClick(click)).toEqual({ emailId: ID, link, redirectTo: link });
    const odd = tracker.verifyClick(tokenOf(tracker.clickUrl(ID, 'https://Example.ORG/a b?q=é')));
    expect(odd).toEqual({
      emailId: ID,
      link: 'https://Example.ORG/a b?q=é',
      redirectTo: 'https://example.org/a%20b?q=%C3%A9',
    });
  });

  it('refuse a token for email A with link X rewritten to link Y or to email B', () => {
    expect(tracker.verifyClick(withPayload(click, `${ID}\nhttps://evil.example/`))).toBeUndefined();
    expect(tracker.verifyClick(withPayload(click, `em_01jother000000000000000000\n${link}`))).toBeUndefined();
    expect(tracker.verifyOpen(withPayload(open, 'em_01jother000000000000000000'))).toBeUndefined();
  });

  it('refuse tampered, truncated, extended, foreign and malformed tokens', () => {
    const flip = (t: string, i: number) => t.slice(0, i) + (t[i] === 'A' ? 'B' : 'A') + t.slice(i + 1);
    for (const i of [0, 5, click.length - 3, click.length - 1])
      expect(tracker.verifyClick(flip(click, i))).toBeUndefined();
    expect(tracker.verifyClick(click.slice(0, -4))).toBeUndefined();
    expect(tracker.verifyClick(click.slice(4))).toBeUndefined();
    expect(tracker.verifyClick(`${click}AAAA`)).toBeUndefined();
    const other = createLinkTracker({ baseUrl: BASE, key: crypto.randomBytes(32) });
    expect(tracker.verifyClick(tokenOf(other.clickUrl(ID, link)))).toBeUndefined();
    expect(tracker.verifyOpen(tokenOf(other.pixelUrl(ID)))).toBeUndefined();
    for (const bad of ['', 'A', 'not a token!', `${click}=`, `${click}/x`, 'A'.repeat(10_000)]) {
      expect(tracker.verifyClick(bad)).toBeUndefined();
      expect(tracker.verifyOpen(bad)).toBeUndefined();
    }
  });

  it('refuse, whatever its mac, a token longer than rewrite can sign (longest email id and link): bounded work per hit', () => {
    const longest = `https://example.org/${'a'.repeat(MAX_LINK_BYTES - 'https://example.org/'.length)}`;
    expect(tracker.verifyClick(tokenOf(tracker.clickUrl(ID, longest)))?.link).toBe(longest);
    // Correctly signed, but longer than any token rewrite makes: refused on its length, before decoding or the mac.
    expect(tracker.verifyClick(tokenOf(tracker.clickUrl(ID, `${longest}${'a'.repeat(100)}`)))).toBeUndefined();
  });

  it('of one kind never verify as the other', () => {
    expect(tracker.verifyClick(open)).toBeUndefined();
    expect(tracker.verifyOpen(click)).toBeUndefined();
  });

  it('never make a non-http link a redirect target, even one signed with the key', () => {
    expect(tracker.verifyClick(tokenOf(tracker.clickUrl(ID, 'javascript:alert(1)')))).toBeUndefined();
  });

  it('need a key of at least 16 bytes', () => {
    expect(() => createLinkTracker({ baseUrl: BASE, key: 'short' })).toThrow(/16 bytes/);
  });
});

describe('performance', () => {
  it('rewrites 5 MB of HTML with tens of thousands of links in well under a second', () => {
    const parts: string[] = [];
    let size = 0;
    for (let i = 0; size < 5_000_000; i++) {
      const p = `<p class="c">Paragraph ${i} <a style="color:#123" href="https://example.org/item/${i % 300}?a=1&amp;b=${i}">item</a> <a href="mailto:x@example.org">m</a> more text here</p>\n`;
      parts.push(p);
      size += p.length;
    }
    const html = `<html><body>${parts.join('')}</body></html>`;
    for (let run = 0; run < 3; run++) {
      const started = process.cpuUsage();
      const out = tracker.rewrite(html, ID, { open: true, click: true });
      expect(cpuMs(started)).toBeLessThan(1000);
      expect(out.length).toBeGreaterThan(html.length);
    }
  });

  it('stays linear on hostile HTML (unclosed quotes, endless tags)', () => {
    for (const hostile of [
      `<a "`.repeat(1_250_000),
      `<a x='`.repeat(800_000),
      `<a href=https://example.org/>`.repeat(170_000),
      '<'.repeat(5_000_000),
    ]) {
      const started = process.cpuUsage();
      tracker.rewrite(hostile, ID, { open: true, click: true });
      expect(cpuMs(started)).toBeLessThan(2000);
    }
  });
});

describe('tracking service', () => {
  const client = { ip: '203.0.113.9', userAgent: 'Mail/1.0' };
  const at = new Date('2030-01-02T03:04:05.000Z');
  const setup = (hit: (h: TrackingHit, rules: TrackingRules, count?: number) => Promise<HitOutcome>) => {
    const onError = vi.fn();
    const hits = { hit: vi.fn(hit) };
    return {
      hits,
      onError,
      service: createTrackingService({ hits, tokens: tracker, now: () => at, windowSeconds: 42, onError }),
    };
  };
  const RULES = { windowSeconds: 42, maxEventsPerEmail: MAX_TRACKING_EVENTS_PER_EMAIL };

  it('hands an open with the spec data to the repository, with the window and the cap', async () => {
    const { hits, service } = setup(async () => 'recorded');
    await service.open(tokenOf(tracker.pixelUrl(ID)), { ...client, userAgent: 'x'.repeat(5000) });
    expect(hits.hit).toHaveBeenCalledWith(
      {
        emailId: ID,
        event: {
          id: expect.stringMatching(/^evt_/),
          type: 'open',
          at,
          data: { timestamp: '2030-01-02T03:04:05.000Z', ip_address: '203.0.113.9', user_agent: 'x'.repeat(512) },
        },
      },
      RULES,
      1,
    );
  });

  it('hands a click with its link and answers the redirect; a bad token reaches no repository', async () => {
    const { hits, service } = setup(async () => 'counted');
    expect(await service.click(tokenOf(tracker.clickUrl(ID, 'https://example.org/x')), client)).toBe(
      'https://example.org/x',
    );
    const [hit, rules, count] = hits.hit.mock.calls[0]!;
    expect(hit.link).toBe('https://example.org/x');
    expect(count).toBe(1);
    expect(hit.event.data).toEqual({
      timestamp: at.toISOString(),
      ip_address: client.ip,
      user_agent: client.userAgent,
      link: 'https://example.org/x',
    });
    expect(rules).toEqual(RULES);
    expect(await service.click('forged', client)).toBeUndefined();
    await service.open('forged', client);
    expect(hits.hit).toHaveBeenCalledTimes(1);
  });

  it('answers where a link leads without counting anything (HEAD)', () => {
    const { hits, service } = setup(async () => 'recorded');
    expect(service.clickTarget(tokenOf(tracker.clickUrl(ID, 'https://example.org/y')))).toBe('https://example.org/y');
    expect(service.clickTarget('forged')).toBeUndefined();
    expect(hits.hit).not.toHaveBeenCalled();
  });

  it('still redirects when the hit cannot be recorded, and reports why', async () => {
    const failure = new Error('database down');
    const { onError, service } = setup(async () => Promise.reject(failure));
    expect(await service.click(tokenOf(tracker.clickUrl(ID, 'https://example.org/x')), client)).toBe(
      'https://example.org/x',
    );
    await service.open(tokenOf(tracker.pixelUrl(ID)), client);
    expect(onError.mock.calls).toEqual([[failure], [failure]]);
  });
});
