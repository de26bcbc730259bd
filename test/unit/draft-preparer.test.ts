import { describe, expect, it } from 'vitest';
import type { EmailDraft } from '../../src/domain/email-draft.js';
import { AppError } from '../../src/errors.js';
import { createDraftPreparer } from '../../src/services/draft-preparer.js';
import { PinnedVersions } from '../../src/services/pinned-versions.js';
import { createTemplateRenderer } from '../../src/services/template-renderer.js';

/**
 * A templated send rendered by the process's own pins and compiled versions (template-renderer.ts): no promise
 * when both are known, one read of each when not, and the same answers either way (draft-preparer.ts).
 */

const TEMPLATE = {
  id: 'tpl_1',
  version: 2,
  subject: 'Order {{order}}',
  html: '<p>{{#each items}}{{@index}}:{{name}}{{#unless @last}}, {{/unless}}{{/each}}</p>',
  text: 'Order {{order}}',
  variables: [{ name: 'order', required: true }],
};

function setup() {
  const reads = { resolve: 0, get: 0 };
  const pins = new PinnedVersions();
  pins.listenStarted();
  const renderer = createTemplateRenderer({
    pins,
    templates: {
      get: async (_account: string, id: string, version: unknown) => {
        reads.get += 1;
        return id === TEMPLATE.id && version === TEMPLATE.version ? (TEMPLATE as never) : undefined;
      },
      pin: async () => undefined,
    },
    service: {
      resolveForSend: async (_account: string, id: string) => {
        reads.resolve += 1;
        if (id !== TEMPLATE.id) throw new AppError('validation', `template.id: no template ${id} (unknown or deleted)`);
        return { id: TEMPLATE.id, version: TEMPLATE.version };
      },
    },
  });
  return { reads, pins, preparer: createDraftPreparer(renderer) };
}

const draft = (variables: Record<string, unknown>, id = TEMPLATE.id): EmailDraft => ({
  from: 'Shop <shop@example.com>',
  to: ['ada@example.org'],
  cc: [],
  bcc: [],
  replyTo: [],
  subject: '',
  html: '',
  text: '',
  attachments: [],
  headers: {},
  tags: {},
  stream: '',
  topic: '',
  template: { id, version: 0, locale: '', variables: variables as never },
});

const VARS = { order: 'A-1', items: [{ name: 'sweater' }, { name: 'socks' }] };

describe('draft preparer: templated sends', () => {
  it('reads the pin and the version once, then renders the same email without a promise', async () => {
    const { reads, preparer } = setup();
    const first = preparer.prepare('acc_1', draft(VARS));
    expect(first).toBeInstanceOf(Promise);
    const a = await first;
    expect(reads).toEqual({ resolve: 1, get: 1 });
    expect(a).toMatchObject({ subject: 'Order A-1', html: '<p>0:sweater, 1:socks</p>', text: 'Order A-1' });
    expect(a.template).toEqual({ id: 'tpl_1', version: 2, locale: '' });

    const second = preparer.prepare('acc_1', draft({ ...VARS, items: [{ name: 'hat' }] }));
    expect(second).not.toBeInstanceOf(Promise);
    expect(second).toMatchObject({ html: '<p>0:hat</p>', template: { id: 'tpl_1', version: 2 } });
    expect(reads).toEqual({ resolve: 1, get: 1 });
  });

  it('asks again once its account has forgotten the pin', async () => {
    const { reads, pins, preparer } = setup();
    await preparer.prepare('acc_1', draft(VARS));
    pins.forgetAccount('acc_1');
    expect(preparer.prepare('acc_1', draft(VARS))).toBeInstanceOf(Promise);
    expect(reads.resolve).toBe(2);
  });

  it('names the batch item in a refusal, whether or not the render needed a promise', async () => {
    const { preparer } = setup();
    // Unknown template: the refusal comes from the (asynchronous) read.
    await expect(preparer.prepareAll('acc_1', [draft(VARS), draft(VARS, 'tpl_none')])).rejects.toThrow(
      'emails[1].template.id: no template tpl_none',
    );
    // A required variable missing, on a pinned version: thrown at once, named the same way.
    await expect(preparer.prepareAll('acc_1', [draft(VARS), draft({ items: [] })])).rejects.toThrow(
      'emails[1].template.variables.order is required',
    );
    expect(() => preparer.prepare('acc_1', { ...draft(VARS), subject: 'Hi' }, 'emails[0].')).toThrow(
      'emails[0].template: give either a template or subject, html and text, not both',
    );
  });

  it('holds the rendered email to the rules of any send', async () => {
    const { preparer } = setup();
    await preparer.prepare('acc_1', draft(VARS));
    expect(() => preparer.prepare('acc_1', { ...draft(VARS), to: ['not an address'] })).toThrow(/to/);
  });
});
