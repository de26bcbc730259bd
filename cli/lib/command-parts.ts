import type { Message } from '@bufbuild/protobuf';
import { accountFlag } from './base-command.js';
import { idArg } from './define-command.js';

// Parts of a command spec that many commands share, spread into emailCommand({...}) or adminCommand({...}):
// the id argument of commands about one thing, the --account flag of commands about one account's things,
// and their --help examples with sample ids.

/** A made-up id of the kind `prefix` names (`bat`, `wh`, ...), for --help examples. */
export const sampleId = (prefix: string): string => `${prefix}_01JZ8Q4V6T3N2K5M7P9R0S1T2U`;

/**
 * The required id argument (`<what> id (<prefix>_...).`) and the examples of a command about one thing: each
 * example is what follows a sample id on the command line, '' the id alone (the default).
 */
export function idOf(what: string, prefix: string, ...after: string[]) {
  const id = sampleId(prefix);
  return {
    args: { id: idArg(`${what} id (${prefix}_...).`) },
    examples: (after.length > 0 ? after : ['']).map((rest) => (rest === '' ? id : `${id} ${rest}`)),
  };
}

/** idOf's argument and examples, and a `call` that sends `{ id }` (annotate `api` with the client's type). */
export function byId<Api, R extends Message>(
  what: string,
  prefix: string,
  call: (api: Api, req: { id: string }) => Promise<R>,
  ...after: string[]
) {
  return {
    ...idOf(what, prefix, ...after),
    call: (api: Api, { args }: { args: { id: string } }) => call(api, { id: args.id }),
  };
}

/** `show` of a command that deletes or cancels one thing: the server's message, else `<done> <id>`. */
export function confirmed(done: string) {
  // Generic, so that the command's result type comes from its `call` alone.
  return <R extends { message: string }>(res: R, { args }: { args: { id: string } }): string =>
    res.message || `${done} ${args.id}`;
}

const ACCOUNT_EXAMPLES = [`--account ${sampleId('acc')}`, `-a ${sampleId('acc')} --json`];

/** The --account flag, examples and a `call` that sends `{ accountId }`, of a command about one account's things. */
export function ofAccount<Api, R extends Message>(
  call: (api: Api, req: { accountId: string }) => Promise<R>,
  examples = ACCOUNT_EXAMPLES,
) {
  return {
    flags: { account: accountFlag },
    examples,
    call: (api: Api, { flags }: { flags: { account: string } }) => call(api, { accountId: flags.account }),
  };
}
