import type { Message } from '@bufbuild/protobuf';
import { Args, type Interfaces } from '@oclif/core';
import { AdminCommand, EmailCommand, type MailerCommand } from './base-command.js';
import type { AdminClient, EmailClient } from './rpc.js';
import type { CommandContext } from './command-context.js';

/**
 * A command that makes one request (or a few) and prints its result: the message with --json, else what
 * `show` makes of it. Everything else (the client, its flags, the error policy) comes from the base class.
 */
export interface CommandSpec<
  Api,
  F extends Interfaces.FlagInput,
  A extends Interfaces.ArgInput,
  R extends Message,
  Base,
> {
  summary: string;
  description?: string;
  /** What follows `mailer <topic> <verb>` in each example shown by --help. */
  examples: string[];
  args?: A;
  flags?: F;
  call(api: Api, ctx: CommandContext<Interfaces.InferredFlags<F & Base>, Interfaces.InferredArgs<A>>): Promise<R>;
  /** The human output: lines logged through ctx, or returned as one string to be logged. */
  show(result: R, ctx: CommandContext<Interfaces.InferredFlags<F & Base>, Interfaces.InferredArgs<A>>): string | void;
  /** The exit code a printed result leaves (default 0): a command that reports a failure it was asked to check. */
  exitCode?(result: R): number;
}

type EmailBase = typeof EmailCommand.baseFlags;
type AdminBase = typeof AdminCommand.baseFlags;

/** A command of the public API, authenticated with an API key. */
export function emailCommand<
  F extends Interfaces.FlagInput = Record<string, never>,
  A extends Interfaces.ArgInput = Record<string, never>,
  R extends Message = Message,
>(spec: CommandSpec<EmailClient, F, A, R, EmailBase>) {
  return defineCommand(
    EmailCommand,
    (cmd, flags: { url: string; 'api-key'?: string }) => asInstanceOf(EmailCommand, cmd).emailClient(flags),
    spec,
  );
}

/** A command of the management API, authenticated with the admin token. */
export function adminCommand<
  F extends Interfaces.FlagInput = Record<string, never>,
  A extends Interfaces.ArgInput = Record<string, never>,
  R extends Message = Message,
>(spec: CommandSpec<AdminClient, F, A, R, AdminBase>) {
  return defineCommand(
    AdminCommand,
    (cmd, flags: { url: string; 'admin-token'?: string }) => asInstanceOf(AdminCommand, cmd).adminClient(flags),
    spec,
  );
}

/** The command as its base class's instance: defineCommand made it from that class, so this never throws; it tells the compiler so. */
function asInstanceOf<C extends MailerCommand>(
  Base: abstract new (...params: ConstructorParameters<typeof MailerCommand>) => C,
  cmd: MailerCommand,
): C {
  if (cmd instanceof Base) return cmd;
  throw new Error(`${cmd.id ?? 'the command'} is not a ${Base.name}`);
}

function defineCommand<Api, F extends Interfaces.FlagInput, A extends Interfaces.ArgInput, R extends Message, Base>(
  Parent: typeof MailerCommand,
  connect: (cmd: MailerCommand, flags: Interfaces.InferredFlags<F & Base>) => Promise<Api>,
  spec: CommandSpec<Api, F, A, R, Base>,
) {
  // Parent is EmailCommand or AdminCommand: oclif finds their --json, --url and credential flags on it.
  const Defined = class extends Parent {
    static override summary = spec.summary;
    static override description = spec.description;
    static override examples = commandExamples(spec.examples);
    static override args = spec.args ?? {};
    static override flags = spec.flags ?? {};

    async run(): Promise<void> {
      const ctx = this.context<Interfaces.InferredFlags<F & Base>, Interfaces.InferredArgs<A>>(await this.parse());
      const result = await spec.call(await connect(this, ctx.flags), ctx);
      await this.print(ctx.flags.json === true, result, () => logShown(ctx, spec.show(result, ctx)));
      const code = spec.exitCode?.(result) ?? 0;
      if (code !== 0) this.exit(code);
    }
  };
  return Defined;
}

/** The one argument of commands about one thing: its id, required. */
export const idArg = (description: string) => Args.string({ description, required: true });

/** Examples for --help from what follows `mailer <topic> <verb>` in each. */
export function commandExamples(examples: string[]): string[] {
  return examples.map((e) => `<%= config.bin %> <%= command.id %>${e === '' ? '' : ` ${e}`}`);
}

function logShown(ctx: { log(line: string): void }, shown: string | void): void {
  if (typeof shown === 'string') ctx.log(shown);
}
