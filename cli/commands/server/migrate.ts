import { Flags } from '@oclif/core';
import { MailerCommand } from '../../lib/base-command.js';

export default class ServerMigrate extends MailerCommand {
  static override summary =
    "Apply the database migrations not yet applied, then exit (the service's own start does it too).";
  static override description =
    'Migrates DATABASE_URL, or the embedded PostgreSQL in MAILER_DATA_DIR when it is unset. Safe to run beside running ' +
    'servers: migrations take a PostgreSQL advisory lock. Logs go to stderr.';

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    'DATABASE_URL=postgres://mailer:secret@db:5432/mailer <%= config.bin %> <%= command.id %> --json',
  ];

  static override baseFlags = {
    json: Flags.boolean({
      description: 'Print the result as JSON: {applied: [versions], version, database}.',
      helpGroup: 'GLOBAL',
    }),
  };

  async run(): Promise<void> {
    const { flags } = await this.parse(ServerMigrate);
    const [{ loadConfig }, { migrate }, { MIGRATIONS }, { createSql }, { startEmbeddedPostgres }, { pino }] =
      await Promise.all([
        import('../../../src/config.js'),
        import('../../../src/db/migrate.js'),
        import('../../../src/db/migrations/index.js'),
        import('../../../src/db/sql.js'),
        import('../../../src/local/embedded-postgres.js'),
        import('pino'),
      ]);
    const config = loadConfig(process.env);
    // Logs on stderr: stdout carries the result.
    const logger = pino(
      { name: 'mailer', level: config.logLevel, base: undefined, timestamp: pino.stdTimeFunctions.isoTime },
      pino.destination({ dest: 2, sync: true }),
    );
    let url = config.databaseUrl;
    let stopEmbedded: (() => Promise<void>) | undefined;
    if (!url) {
      const pg = await startEmbeddedPostgres({ dataDir: config.dataDir, port: config.embeddedPostgresPort, logger });
      url = pg.url;
      stopEmbedded = pg.stop;
    }
    const sql = createSql(url, { max: 1 });
    let applied: number[];
    try {
      applied = await migrate(sql, logger);
    } finally {
      await sql.end({ timeout: 5 });
      await stopEmbedded?.();
    }
    const version = Math.max(0, ...MIGRATIONS.map((m) => m.version));
    const database = config.databaseUrl ? redact(config.databaseUrl) : `embedded PostgreSQL in ${config.dataDir}`;
    if (flags.json) {
      this.printJson({ applied, version, database });
      return;
    }
    const names = new Map(MIGRATIONS.map((m) => [m.version, m.name]));
    if (applied.length === 0) this.log(`${database}: up to date (schema version ${version}).`);
    else
      this.log(
        `${database}: applied ${applied.map((v) => `${v} ${names.get(v) ?? ''}`.trim()).join(', ')} (schema version ${version}).`,
      );
  }
}

/** The URL without its password. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'DATABASE_URL';
  }
}
