import { describe, expect, it } from 'vitest';
import {
  applyVars,
  checkDeclarations,
  checkLocalizations,
  variablesFromFlags,
  type Json,
} from '../../cli/lib/template-input.js';

/** The template commands' own parsing of variables and content files, without a service. */

describe('--var', () => {
  it('sets string values, dotted names into objects, over --variables, without changing what it was given', () => {
    const base = { name: 'Bob', count: 3, user: { plan: 'free', id: 7 } };
    const out = applyVars(base, ['name=Ann', 'user.plan=pro', 'greeting=a=b', 'empty=', 'deep.a.b=c']);
    expect(out).toEqual({
      name: 'Ann',
      count: 3,
      user: { plan: 'pro', id: 7 },
      greeting: 'a=b',
      empty: '',
      deep: { a: { b: 'c' } },
    });
    expect(base).toEqual({ name: 'Bob', count: 3, user: { plan: 'free', id: 7 } });
  });

  it('refuses a pair without a name or "=", an empty path step, and a property of a value that is no object', () => {
    expect(() => applyVars({}, ['name'])).toThrow('--var must be "name=value", got "name"');
    expect(() => applyVars({}, ['=x'])).toThrow('--var must be "name=value", got "=x"');
    expect(() => applyVars({}, ['a..b=x'])).toThrow('--var: "a..b" is not a variable name');
    expect(() => applyVars({}, ['a=1', 'a.b=2'])).toThrow(
      '--var a.b=2: a is already a string, not an object to set b in',
    );
    expect(() => applyVars({ a: [1] }, ['a.b=2'])).toThrow('a is already a list');
  });

  it('makes __proto__ a variable of that name, never the prototype', () => {
    const out = applyVars({}, ['__proto__=x', 'constructor.prototype=y']);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__', 'constructor']);
    expect(JSON.parse(JSON.stringify(out))).toEqual(JSON.parse('{"__proto__":"x","constructor":{"prototype":"y"}}'));
  });

  it('merges --variables JSON with --var; none given is undefined; JSON that is not an object is refused', async () => {
    expect(await variablesFromFlags({})).toBeUndefined();
    expect(await variablesFromFlags({ variables: '{"a": 1, "items": [1, 2]}', var: ['b=2'] })).toEqual({
      a: 1,
      items: [1, 2],
      b: '2',
    });
    await expect(variablesFromFlags({ variables: '[1]' })).rejects.toThrow(
      '--variables must be a JSON object {"name": value, ...}, got a list',
    );
    await expect(variablesFromFlags({ variables: '{oops' })).rejects.toThrow(/^--variables is not JSON: /);
    await expect(variablesFromFlags({ 'variables-file': '/nonexistent/vars.json' })).rejects.toThrow(
      /--variables-file: cannot read \/nonexistent\/vars\.json/,
    );
  });
});

describe('content files', () => {
  it('a variables file is the API list of {name, required?, default?}', () => {
    const ok: Json[] = [{ name: 'a' }, { name: 'b', required: false }, { name: 'c', default: { x: [1] } }];
    expect(checkDeclarations(ok, '--variables-file')).toBe(ok);
    expect(() => checkDeclarations({ name: 'a' }, '--variables-file')).toThrow(
      '--variables-file must hold a JSON list of {"name", "required"?, "default"?}, got an object',
    );
    expect(() => checkDeclarations(['a'], 'f')).toThrow('f: item 0 must be an object');
    expect(() => checkDeclarations([{ name: 'a' }, { nme: 'b' }], 'f')).toThrow('f: item 1 has an unknown field "nme"');
    expect(() => checkDeclarations([{ required: true }], 'f')).toThrow('f: item 0 needs a "name" (a string)');
    expect(() => checkDeclarations([{ name: 'a', required: 'no' }], 'f')).toThrow(
      'f: item 0: "required" must be true or false',
    );
  });

  it('a localizations file is an object of locale to {subject?, html?, text?} strings', () => {
    const ok = { de: { subject: 'Hallo' }, 'pt-BR': { html: '<p>Olá</p>', text: 'Olá' } };
    expect(checkLocalizations(ok, 'f')).toBe(ok);
    expect(() => checkLocalizations([], 'f')).toThrow('f must hold a JSON object');
    expect(() => checkLocalizations({ de: 'Hallo' }, 'f')).toThrow('f: "de" must be an object');
    expect(() => checkLocalizations({ de: { body: 'x' } }, 'f')).toThrow('f: "de" has an unknown field "body"');
    expect(() => checkLocalizations({ de: { subject: 1 } }, 'f')).toThrow('f: "de".subject must be a string');
  });
});
