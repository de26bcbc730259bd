import { Flags } from '@oclif/core';
import { BaseCommand } from '../../lib/base-command.js';

export default class ServerStart extends BaseCommand {
  static override summary = 'Run the service in this process (what `npm start` runs), until Ctrl-C.';
  static override description = [
    'Roles: `api` (REST gateway, gRPC/Connect), `worker` (Temporal worker, dispatcher, mail catcher) or `all`.',
    '',
    'Everything else is configured by the environment, as for `npm start`: DATABASE_URL, TEMPORAL_ADDRESS, SMTP_URL, ' +
      'PORT, GRPC_PORT, MAILER_ADMIN_TOKEN, ... (see the README). Whatever is not configured is started embedded ' +
      '(PostgreSQL, a Temporal dev server, a mail catcher). The first start prints an API key and the admin token, once ' +
      '(should it stop before, the next start prints the key). Logs are JSON lines on stdout, human-readable in a terminal (MAILER_LOG_FORMAT).',
  ].join('\n');

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    'DATABASE_URL=postgres://... TEMPORAL_ADDRESS=temporal:7233 <%= config.bin %> <%= command.id %> --role api',
    'DATABASE_URL=postgres://... TEMPORAL_ADDRESS=temporal:7233 SMTP_URL=smtp://relay:587 <%= config.bin %> <%= command.id %> --role worker',
  ];

  // A long-running process without a result: its output is the banner and the JSON log lines (no --json).
  static override flags = {
    role: Flags.option({
      options: ['api', 'worker', 'all'] as const,
      summary: 'Which parts run in this process (default: MAILER_ROLE, else all).',
    })(),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ServerStart);
    // Loaded here so that every other command starts without the server's modules.
    const { runServer } = await import('../../../src/start.js');
    await runServer(flags.role ? { role: flags.role } : {});
  }
}
