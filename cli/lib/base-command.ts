import type { Message } from '@bufbuild/protobuf';
import { Command, Errors, Flags, type Interfaces } from '@oclif/core';
import type { CommandContext } from './command-context.js';
import type { AdminClient, Closer, EmailClient } from './rpc.js';

/** The Connect base URL of a local `npm start` (GRPC_PORT). */
export const DEFAULT_URL = 'http://127.0.0.1:8081';

/** Exit codes: 0 success, 1 the API (or the server) refused or failed, 2 the command line was wrong. */
export const EXIT_API_ERROR = 1;
export const EXIT_USAGE = 2;

/** A mistake on the command line or in a file it names: printed like oclif's own parse errors, exit 2. */
export function usageError(message: string): Errors.CLIError {
  return new Errors.CLIError(message, { exit: EXIT_USAGE });
}

// Command modules import nothing heavy at load time: oclif loads every one of them to list commands
// for --help. Clients, generated schemas and protobuf JSON come from ./rpc.js when a command runs.
const loadRpc = () => import('./rpc.js');
type Rpc = Awaited<ReturnType<typeof loadRpc>>;

/**
 * The error policy of every command: failures at run time (a refusal of the API, the server unreachable,
 * a server role that could not start) print one line, `error: message` (the spec's error body), on
 * stderr and exit 1; usage errors (oclif's parser errors, usageError) exit 2.
 */
export abstract class BaseCommand extends Command {
  private readonly closers: Closer[] = [];

  protected printJson(value: unknown): void {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** A line on stderr (progress, hints), never mixed into the result on stdout. */
  protected note(line: string): void {
    process.stderr.write(`${line}\n`);
  }

  /** A client of the service at `url` with `secret` (its API key or admin token), closed when the command ends. */
  protected async clientFor<C>(
    url: string,
    secret: string | undefined,
    credential: { missing: string },
    open: (rpc: Rpc, base: string, secret: string) => { client: C; close: Closer },
  ): Promise<C> {
    const base = checkUrl(url);
    if (!secret) throw usageError(credential.missing);
    const { client, close } = open(await loadRpc(), base, secret);
    this.closers.push(close);
    return client;
  }

  protected override async catch(err: Interfaces.CommandError): Promise<unknown> {
    // oclif's own errors (parse errors, usage errors, this.exit) keep their exit codes and rendering.
    if ('oclif' in err && err.oclif) return super.catch(err);
    process.stderr.write(`${(await loadRpc()).describeFailure(err)}\n`);
    this.exit(EXIT_API_ERROR);
  }

  protected override async finally(err: Error | undefined): Promise<unknown> {
    for (const close of this.closers.splice(0)) close();
    return super.finally(err);
  }
}

function checkUrl(url: string): string {
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    throw usageError(`--url (MAILER_URL) is not a URL: "${url}"`);
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:')
    throw usageError(`--url (MAILER_URL) must be http:// or https://, got "${url}"`);
  return base.toString();
}

const urlFlag = Flags.string({
  description: 'Connect (gRPC) base URL of the service.',
  env: 'MAILER_URL',
  default: DEFAULT_URL,
  helpGroup: 'GLOBAL',
});

/**
 * A command with a result: `--json` prints it as the API message (the spec's field names, defaults
 * included, as the REST API writes it); human output otherwise.
 */
export abstract class MailerCommand extends BaseCommand {
  static override baseFlags = {
    json: Flags.boolean({
      description: 'Print the result as JSON (the API message, field names as in the spec).',
      helpGroup: 'GLOBAL',
    }),
  };

  /** The parsed input, typed as the command's static args and flags declare, with its output lines. */
  protected context<F, A>(parsed: { flags: unknown; args: unknown }): CommandContext<F, A> {
    return {
      flags: parsed.flags as F,
      args: parsed.args as A,
      bin: this.config.bin,
      log: (line) => this.log(line),
      note: (line) => this.note(line),
    };
  }

  /** Prints `message` as JSON with --json, else runs `human`. */
  protected async print(json: boolean, message: Message, human: () => void): Promise<void> {
    if (json) this.printJson((await loadRpc()).messageToJson(message));
    else human();
  }
}

/** The credential of one of the two APIs: its global flag, and the usage error when neither it nor its variable is set. */
function credential(what: string, flag: string, env: string, description: string) {
  return {
    flag: Flags.string({ description, env, helpGroup: 'GLOBAL' }),
    missing: `no ${what}: pass --${flag} or set ${env}`,
  };
}

const API_KEY = credential('API key', 'api-key', 'MAILER_API_KEY', 'API key (mk_...).');
const ADMIN_TOKEN = credential(
  'admin token',
  'admin-token',
  'MAILER_ADMIN_TOKEN',
  'Admin token of the management API.',
);

/** Commands of the public API (`mail.v1.EmailService`), authenticated with an API key. */
export abstract class EmailCommand extends MailerCommand {
  static override baseFlags = { ...MailerCommand.baseFlags, url: urlFlag, 'api-key': API_KEY.flag };

  emailClient(flags: { url: string; 'api-key'?: string | undefined }): Promise<EmailClient> {
    return this.clientFor(flags.url, flags['api-key'], API_KEY, (rpc, base, key) => rpc.emailClient(base, key));
  }
}

/** Commands of the management API (`mail.v1.AdminService`), authenticated with the admin token. */
export abstract class AdminCommand extends MailerCommand {
  static override baseFlags = { ...MailerCommand.baseFlags, url: urlFlag, 'admin-token': ADMIN_TOKEN.flag };

  adminClient(flags: { url: string; 'admin-token'?: string | undefined }): Promise<AdminClient> {
    return this.clientFor(flags.url, flags['admin-token'], ADMIN_TOKEN, (rpc, base, token) =>
      rpc.adminClient(base, token),
    );
  }
}

/** `--account` of the admin commands that work inside one account. */
export const accountFlag = Flags.string({ char: 'a', description: 'Account id (acc_...).', required: true });
