import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventually } from '../helpers/http.js';
import { useCli } from '../helpers/use-cli.js';

/**
 * The template commands as a user runs them: `bin/run.js` in a child process against the real service (its Connect
 * API, PostgreSQL, Temporal, a receiving SMTP server), from creating a template to sending it.
 */

const cli = useCli();
const { stack, mailer, json, ok } = cli;

interface TemplateJson {
  id: string;
  name: string;
  alias?: string;
  subject: string;
  html: string;
  text: string;
  variables: { name: string; required?: boolean; default?: unknown }[];
  localizations: Record<string, { subject?: string; html?: string; text?: string }>;
  version: number;
  published_version: number;
  latest_version: number;
}

interface EmailJson {
  id: string;
  status: string;
  subject: string;
  html: string;
  text: string;
  template?: { id: string; version: number; locale: string };
}

const write = (file: string, content: string) => fs.writeFile(path.join(cli.workDir, file), content);

/** `emails send --template <args>` to one recipient; answers the stored email once it is delivered. */
async function sendTemplate(to: string, args: string[]): Promise<EmailJson> {
  const sent = await json<{ id: string }>(['emails', 'send', '-f', 'hello@example.com', '-t', to, ...args]);
  return eventually(
    async () => {
      const e = await json<EmailJson>(['emails', 'get', sent.id]);
      return e.status === 'delivered' ? e : undefined;
    },
    20_000,
    200,
  );
}

describe('templates', () => {
  it('--help lists the topic and its commands', async () => {
    const root = await ok(['--help']);
    expect(root.stdout).toMatch(/^\s+templates\s+Stored, versioned Handlebars templates/m);
    const topic = await ok(['templates', '--help']);
    for (const c of ['create', 'list', 'get', 'edit', 'publish', 'render', 'delete'])
      expect(topic.stdout).toContain(`templates ${c}`);
    const send = await ok(['emails', 'send', '--help']);
    expect(send.stdout).toContain('--template=<value>');
    expect(send.stdout).toContain('--template-version=<value>');
  });

  // Sixteen CLI runs, each a Node start-up: 48-49 s on a 2-core CI machine a third as fast as most, beside
  // the suite's other files (the default limit is 60 s).
  it('create, render, edit into version 2, publish it; sends render the published version, stored as rendered', async () => {
    await write('welcome.html', '<p>Hello {{name}}, plan {{plan}}{{#if nickname}} ({{nickname}}){{/if}}</p>\n');
    await write(
      'welcome-vars.json',
      JSON.stringify([{ name: 'name' }, { name: 'plan', default: 'free' }, { name: 'nickname', required: false }]),
    );
    await write('welcome-locales.json', JSON.stringify({ de: { subject: 'Willkommen, {{name}}' } }));
    const created = await json<TemplateJson>([
      'templates',
      'create',
      '--name',
      'Welcome',
      '--alias',
      'welcome-cli',
      '--subject',
      'Welcome, {{name}}',
      '--html-file',
      'welcome.html',
      '--text',
      'Hi {{name}} & co',
      '--variables-file',
      'welcome-vars.json',
      '--localizations-file',
      'welcome-locales.json',
    ]);
    expect(created).toMatchObject({
      id: expect.stringMatching(/^tpl_/),
      name: 'Welcome',
      alias: 'welcome-cli',
      subject: 'Welcome, {{name}}',
      text: 'Hi {{name}} & co',
      variables: [{ name: 'name' }, { name: 'plan', default: 'free' }, { name: 'nickname', required: false }],
      localizations: { de: { subject: 'Willkommen, {{name}}' } },
      version: 1,
      published_version: 1,
    });
    expect(created.html).toContain('Hello {{name}}');

    // Rendered readably: the html escaped, the text not, the default and the optional variable applied.
    const rendered = await ok(['templates', 'render', 'welcome-cli', '--var', 'name=<Ann>']);
    expect(rendered.stdout).toMatch(/^subject\s+Welcome, <Ann>$/m);
    expect(rendered.stdout).toContain('--- html ---\n<p>Hello &lt;Ann&gt;, plan free</p>');
    expect(rendered.stdout).toContain('--- text ---\nHi <Ann> & co');
    const german = await json<{ subject: string; html: string }>([
      'templates',
      'render',
      created.id,
      '--variables',
      '{"name": "Ann", "plan": "pro"}',
      '--var',
      'nickname=annie',
      '--locale',
      'de-AT',
    ]);
    expect(german.subject).toBe('Willkommen, Ann');
    expect(german.html).toBe('<p>Hello Ann, plan pro (annie)</p>\n');

    // An edit sends only the flag given: version 2 keeps the rest, and sends keep using version 1.
    const edit = await mailer(['templates', 'edit', 'welcome-cli', '--subject', 'Hello again, {{name}}']);
    expect(edit.code, edit.stderr).toBe(0);
    expect(edit.stdout).toMatch(/^version\s+2$/m);
    expect(edit.stdout).toMatch(/^published_version\s+1 \(sends use it, not version 2\)$/m);
    expect(edit.stderr).toBe(
      'Sends still use version 1; publish this one with: mailer templates publish welcome-cli --version 2\n',
    );
    const edited = await json<TemplateJson>(['templates', 'get', 'welcome-cli']);
    expect(edited).toMatchObject({
      id: created.id,
      alias: 'welcome-cli',
      subject: 'Hello again, {{name}}',
      text: 'Hi {{name}} & co',
      html: created.html,
      variables: created.variables,
      localizations: created.localizations,
      version: 2,
      published_version: 1,
    });
    const v1 = await ok(['templates', 'get', 'welcome-cli', '--version', '1']);
    expect(v1.stdout).toMatch(/^subject\s+Welcome, \{\{name\}\}$/m);
    expect(v1.stdout).toMatch(/^published_version\s+1 \(this version\)$/m);
    expect(v1.stdout).toContain('--- html ---\n<p>Hello {{name}}');
    expect(v1.stdout).toMatch(/^variables\s+name, plan \(default "free"\), nickname \(optional\)$/m);

    const beforePublish = await sendTemplate('v1@example.net', ['--template', 'welcome-cli', '--var', 'name=Ann']);
    expect(beforePublish).toMatchObject({
      subject: 'Welcome, Ann',
      html: '<p>Hello Ann, plan free</p>\n',
      text: 'Hi Ann & co',
      template: { id: created.id, version: 1, locale: '' },
    });
    const shown = await ok(['emails', 'get', beforePublish.id]);
    expect(shown.stdout).toMatch(new RegExp(`^template\\s+${created.id} version 1$`, 'm'));

    const published = await json<TemplateJson>(['templates', 'publish', 'welcome-cli']);
    expect(published).toMatchObject({ version: 2, published_version: 2 });
    const afterPublish = await sendTemplate('v2@example.net', [
      '--template',
      created.id,
      '--var',
      'name=Ann',
      '--locale',
      'de-AT',
    ]);
    expect(afterPublish.subject).toBe('Willkommen, Ann');
    expect(afterPublish.template).toEqual({ id: created.id, version: 2, locale: 'de-AT' });
    const pinned = await sendTemplate('pinned@example.net', [
      '--template',
      'welcome-cli',
      '--template-version',
      '1',
      '--var',
      'name=Bob',
    ]);
    expect(pinned.subject).toBe('Welcome, Bob');
    expect(pinned.template?.version).toBe(1);
    // What arrived is the rendered email.
    const arrived = stack.sink.messages.find((m) => m.envelopeTo.includes('pinned@example.net'));
    expect(arrived?.parsed.subject).toBe('Welcome, Bob');

    // --publish: the edit is live at once.
    await write('welcome.txt', 'Hey {{name}}');
    const live = await json<TemplateJson>(['templates', 'edit', created.id, '--text-file', 'welcome.txt', '--publish']);
    expect(live).toMatchObject({ version: 3, published_version: 3, text: 'Hey {{name}}' });
    const rendered3 = await json<{ text: string }>(['templates', 'render', 'welcome-cli', '--var', 'name=Ann']);
    expect(rendered3.text).toBe('Hey Ann');

    const listed = await json<{ templates: { id: string; version: number; published_version: number }[] }>([
      'templates',
      'list',
    ]);
    expect(listed.templates.find((t) => t.id === created.id)).toMatchObject({ version: 3, published_version: 3 });
    const table = await ok(['templates', 'list']);
    expect(table.stdout).toMatch(/^ID\s+ALIAS\s+NAME\s+SUBJECT\s+VERSION\s+PUBLISHED\s+UPDATED$/m);
    expect(table.stdout).toMatch(
      new RegExp(`^${created.id}\\s+welcome-cli\\s+Welcome\\s+Hello again, \\{\\{name\\}\\}\\s+3\\s+3\\s`, 'm'),
    );

    // Publishing an older version rolls back.
    const back = await json<TemplateJson>(['templates', 'publish', 'welcome-cli', '--version', '1']);
    expect(back).toMatchObject({ version: 3, published_version: 1, latest_version: 3 });
    expect((await json<{ text: string }>(['templates', 'render', 'welcome-cli', '--var', 'name=Ann'])).text).toBe(
      'Hi Ann & co',
    );

    // --alias "" removes the alias: the template is then named by its id only.
    const unaliased = await json<TemplateJson>(['templates', 'edit', created.id, '--alias', '']);
    expect(unaliased.alias).toBeUndefined();
    expect(unaliased.version).toBe(4);
    expect((await mailer(['templates', 'get', 'welcome-cli'])).code).toBe(1);
  }, 120_000);

  it('scheduled create --template stores the email rendered', async () => {
    await json<TemplateJson>([
      'templates',
      'create',
      '--name',
      'Reminder',
      '--alias',
      'reminder-cli',
      '-s',
      'Due: {{what}}',
      '--text',
      'Remember {{what}}',
    ]);
    const created = await json<{ id: string }>([
      'scheduled',
      'create',
      '--in',
      '1s',
      '-f',
      'hello@example.com',
      '-t',
      'later@example.net',
      '--template',
      'reminder-cli',
      '--var',
      'what=the dentist',
    ]);
    const email = await eventually(
      async () => {
        const list = await json<{ data: { id: string }[] }>(['emails', 'list', '--job-id', created.id]);
        return list.data[0] ? json<EmailJson>(['emails', 'get', list.data[0].id]) : undefined;
      },
      30_000,
      300,
    );
    expect(email.subject).toBe('Due: the dentist');
    expect(email.text).toBe('Remember the dentist');
    expect(email.template).toMatchObject({ version: 1, locale: '' });
  });

  it('batches send --file: a CSV mail merge, each row its own variables (var: columns and a variables cell)', async () => {
    await json<TemplateJson>([
      'templates',
      'create',
      '--name',
      'Merge',
      '--alias',
      'merge-cli',
      '-s',
      'Order {{order.number}} for {{name}}',
      '--text',
      '{{name}}: {{#each items}}{{this}};{{/each}}',
    ]);
    const csv = [
      'from,to,template,var:name,var:order.number,variables,locale',
      'hello@example.com,merge-1@example.net,merge-cli,Ann,A-1,"{""items"": [""x"", ""y""]}",',
      'hello@example.com,merge-2@example.net,merge-cli,Bob,B-2,"{""items"": []}",de',
    ].join('\n');
    await write('merge.csv', csv);
    const job = await json<{ job_id: string; status: string; sent_count: number }>([
      'batches',
      'send',
      '--file',
      'merge.csv',
    ]);
    expect(job).toMatchObject({ status: 'completed', sent_count: 2 });
    const list = await json<{ data: { id: string }[] }>(['emails', 'list', '--job-id', job.job_id]);
    const emails = await Promise.all(list.data.map((e) => json<EmailJson>(['emails', 'get', e.id])));
    expect(emails.map((e) => [e.subject, e.text, e.template?.locale]).sort()).toEqual([
      ['Order A-1 for Ann', 'Ann: x;y;', ''],
      ['Order B-2 for Bob', 'Bob: ', 'de'],
    ]);

    // A variables cell that is not a JSON object, and template cells without a template, name their line.
    await write('bad-merge.csv', 'from,to,template,variables\nhello@example.com,m@example.net,merge-cli,[1]\n');
    const bad = await mailer(['batches', 'send', '--file', 'bad-merge.csv']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/bad-merge\.csv line 2: variables must be a JSON object/);
    await write('orphan.csv', 'from,to,subject,text,var:name\nhello@example.com,m@example.net,s,t,Ann\n');
    const orphan = await mailer(['batches', 'send', '--file', 'orphan.csv']);
    expect(orphan.stderr).toMatch(/orphan\.csv line 2: [\s\S]*need a template cell/);
  });

  it('refuses mistakes: a variable missing, a bad --var, subject and template together, bad files; delete', async () => {
    const t = await json<TemplateJson>([
      'templates',
      'create',
      '--name',
      'Order',
      '-s',
      'Order {{number}}',
      '--text',
      'x',
    ]);
    const before = (await json<{ total: number }>(['emails', 'list'])).total;

    const missing = await mailer([
      'emails',
      'send',
      '-f',
      'hello@example.com',
      '-t',
      'a@example.net',
      '--template',
      t.id,
    ]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('validation error: template.variables.number is required\n');
    const renderMissing = await mailer(['templates', 'render', t.id]);
    expect(renderMissing.code).toBe(1);
    expect(renderMissing.stderr).toBe('validation error: variables.number is required\n');

    const badVar = await mailer([
      'emails',
      'send',
      '-f',
      'hello@example.com',
      '-t',
      'a@example.net',
      '--template',
      t.id,
      '--var',
      'number',
    ]);
    expect(badVar.code).toBe(2);
    expect(badVar.stderr).toContain('--var must be "name=value", got "number"');
    const badJson = await mailer(['templates', 'render', t.id, '--variables', '[1, 2]']);
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toContain('--variables must be a JSON object');
    const both = await mailer([
      'emails',
      'send',
      '-f',
      'hello@example.com',
      '-t',
      'a@example.net',
      '--template',
      t.id,
      '-s',
      'x',
    ]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--subject=x cannot also be provided when using --template');
    const varAlone = await mailer([
      'emails',
      'send',
      '-f',
      'hello@example.com',
      '-t',
      'a@example.net',
      '-s',
      'x',
      '--text',
      'x',
      '--var',
      'a=b',
    ]);
    expect(varAlone.code).toBe(2);
    expect(varAlone.stderr).toContain('--template');
    const noChange = await mailer(['templates', 'edit', t.id]);
    expect(noChange.code).toBe(2);
    expect(noChange.stderr).toContain('At least one of the following must be provided');
    await write('bad-vars.json', '{"name": "number"}');
    const badFile = await mailer([
      'templates',
      'create',
      '--name',
      'x',
      '-s',
      'x',
      '--text',
      'x',
      '--variables-file',
      'bad-vars.json',
    ]);
    expect(badFile.code).toBe(2);
    expect(badFile.stderr).toContain('--variables-file must hold a JSON list');
    const noName = await mailer(['templates', 'create', '-s', 'x', '--text', 'x']);
    expect(noName.code).toBe(2);
    expect(noName.stderr).toMatch(/Missing required flag.*name/s);
    // None of these sent anything.
    expect((await json<{ total: number }>(['emails', 'list'])).total).toBe(before);

    // The server's own refusals arrive as `error: message`, exit 1.
    const taken = await mailer([
      'templates',
      'create',
      '--name',
      'y',
      '--alias',
      'Not An Alias',
      '-s',
      'x',
      '--text',
      'x',
    ]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/^validation error: .*alias/);

    const deleted = await ok(['templates', 'delete', t.id]);
    expect(deleted.stdout.trim()).toBe(`template ${t.id} deleted`);
    const gone = await mailer(['templates', 'get', t.id]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/^not found: /);
    const sendGone = await mailer([
      'emails',
      'send',
      '-f',
      'hello@example.com',
      '-t',
      'a@example.net',
      '--template',
      t.id,
      '--var',
      'number=1',
    ]);
    expect(sendGone.code).toBe(1);
    expect(sendGone.stderr).toMatch(/^validation error: .*template\.id/);
  });
});
