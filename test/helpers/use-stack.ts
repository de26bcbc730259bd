import { afterAll, beforeAll } from 'vitest';
import type { Config } from '../../src/config.js';
import { startStack, type Stack } from './stack.js';

type StackEnv = Record<string, string> | (() => Promise<Record<string, string>>);

/**
 * A stack for the tests of the enclosing file or `describe`: started before the first of them, stopped after
 * the last. The stack only exists once `beforeAll` has run, so what is returned is a stand-in that reads
 * through to it; a file's own `afterAll` hooks run before this one stops it.
 */
export function useStack(env: StackEnv = {}, overrides: Partial<Config> = {}): Stack {
  let current: Stack | undefined;
  beforeAll(async () => {
    current = await startStack(typeof env === 'function' ? await env() : env, overrides);
  });
  afterAll(async () => {
    await current?.stop();
  });
  return new Proxy({} as Stack, {
    get(_target, key) {
      if (!current) throw new Error(`the stack is not started yet (reading ${String(key)} outside a test or hook)`);
      return Reflect.get(current, key) as unknown;
    },
  });
}
