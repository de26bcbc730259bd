import { describe, expect, it } from 'vitest';
import { PinnedVersions } from '../../src/services/pinned-versions.js';

const v = (version: number) => ({ id: 'tpl_1', version });

describe('the published versions an API process remembers', () => {
  it('keeps nothing until the LISTEN is in place, and nothing after it stops', () => {
    const pins = new PinnedVersions();
    pins.set('acc_a', 'welcome@0', v(1));
    expect(pins.get('acc_a', 'welcome@0')).toBeUndefined();
    pins.listenStarted();
    pins.set('acc_a', 'welcome@0', v(1));
    expect(pins.get('acc_a', 'welcome@0')).toEqual(v(1));
    pins.listenStopped();
    expect(pins.get('acc_a', 'welcome@0')).toBeUndefined();
    pins.set('acc_a', 'welcome@0', v(1));
    expect(pins.entries).toBe(0);
  });

  it("forgets an account's entries on its change, every entry on a new LISTEN, and each after its time", () => {
    let now = 1_000;
    const pins = new PinnedVersions(() => now, 10_000);
    pins.listenStarted();
    pins.set('acc_a', 'welcome@0', v(1));
    pins.set('acc_a', 'receipt@0', v(3));
    pins.set('acc_b', 'welcome@0', v(7));
    pins.forgetAccount('acc_a');
    expect([pins.get('acc_a', 'welcome@0'), pins.get('acc_a', 'receipt@0')]).toEqual([undefined, undefined]);
    expect(pins.get('acc_b', 'welcome@0')).toEqual(v(7));
    expect(pins.entries).toBe(1);
    pins.listenStarted();
    expect(pins.get('acc_b', 'welcome@0')).toBeUndefined();
    pins.set('acc_b', 'welcome@0', v(8));
    now += 9_999;
    expect(pins.get('acc_b', 'welcome@0')).toEqual(v(8));
    now += 1;
    expect(pins.get('acc_b', 'welcome@0')).toBeUndefined();
    expect(pins.entries).toBe(0);
  });

  it('holds at most maxEntries, starting over when full', () => {
    const pins = new PinnedVersions(Date.now, 10_000, 3);
    pins.listenStarted();
    for (let i = 0; i < 3; i++) pins.set('acc_a', `t${i}@0`, v(i + 1));
    expect(pins.entries).toBe(3);
    pins.set('acc_a', 't3@0', v(4));
    expect(pins.entries).toBe(1);
    expect(pins.get('acc_a', 't3@0')).toEqual(v(4));
  });
});
