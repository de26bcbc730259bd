import fs from 'node:fs/promises';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { CaughtMessagesRepo } from '../db/index.js';
import { newId } from '../ids.js';
import type { Logger } from '../logger.js';
import { makePrivateDir, PRIVATE_FILE_MODE } from '../private-dir.js';
import { listenSmtp, type Listening } from '../inbound/smtp-listen.js';
import { createReportFeeder, simulatedOutcome, simulatedRefusal, simulatedReport } from './simulator.js';

/** The largest message the catcher accepts: a 10 MB email grows by about a third in transfer encoding. */
const MAX_MESSAGE_BYTES = 40 * 1024 * 1024;

export type Catcher = Listening;

/**
 * The built-in mail catcher used when SMTP_URL is unset: a real SMTP server on loopback that accepts
 * every message and keeps it, as an .eml file under `<dataDir>/mail/` and as a row the management API
 * (and console) list. Nothing it receives leaves the machine. Recipients at the simulator's domain
 * (simulator.ts) bounce, complain or bounce later; their reports go to `onSimulatedReport`.
 */
export async function startCatcher(options: {
  host: string;
  port: number;
  dataDir: string;
  repo: CaughtMessagesRepo;
  logger: Logger;
  /** Takes the reports simulator recipients send back; a rejection means "try again later". */
  onSimulatedReport?: (report: Buffer, rcptTo: string[]) => Promise<unknown>;
}): Promise<Catcher> {
  const { repo, logger } = options;
  const reports = options.onSimulatedReport ? createReportFeeder(options.onSimulatedReport, logger) : undefined;
  const mailDir = path.join(options.dataDir, 'mail');
  await makePrivateDir(mailDir);

  const server = new SMTPServer({
    name: 'mailer-catcher',
    banner: 'mailer built-in mail catcher',
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    size: MAX_MESSAGE_BYTES,
    logger: false,
    onRcptTo(address, _session, callback) {
      callback(simulatedOutcome(address.address) === 'bounce' ? simulatedRefusal(address.address) : undefined);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        if (stream.sizeExceeded) {
          return callback(
            Object.assign(new Error('552 message exceeds the fixed maximum message size'), { responseCode: 552 }),
          );
        }
        const raw = Buffer.concat(chunks);
        store(raw, session.envelope).then(
          () => callback(),
          (err: unknown) => {
            logger.error({ err }, 'catcher could not store a message');
            callback(Object.assign(new Error('451 could not store the message, try again'), { responseCode: 451 }));
          },
        );
      });
    },
  });

  async function store(
    raw: Buffer,
    envelope: { mailFrom: false | { address: string }; rcptTo: { address: string }[] },
  ): Promise<void> {
    const parsed = await simpleParser(raw, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
    const id = newId('caught');
    const file = path.join(mailDir, `${id}.eml`);
    // Mail is personal data: the owner's only (private-dir.ts).
    await fs.writeFile(file, raw, { mode: PRIVATE_FILE_MODE });
    const row = {
      id,
      messageId: parsed.messageId ?? '',
      envelopeFrom: envelope.mailFrom ? envelope.mailFrom.address : '',
      envelopeTo: envelope.rcptTo.map((r) => r.address),
      subject: parsed.subject ?? '',
      size: raw.length,
      path: file,
    };
    await repo.insert({ ...row, raw });
    logger.info({ to: row.envelopeTo, subject: row.subject, file }, 'mail caught');
    for (const recipient of row.envelopeTo) {
      const outcome = simulatedOutcome(recipient);
      // Mailed back to the copy's envelope sender, as servers do: that recipient's return path.
      if (outcome === 'complaint' || outcome === 'asyncbounce')
        reports?.feed(simulatedReport(outcome, raw, { mailFrom: row.envelopeFrom, recipient }), [row.envelopeFrom]);
    }
  }

  const listening = await listenSmtp(server, options.host, options.port, (err) =>
    logger.error({ err }, 'catcher error'),
  );
  return {
    port: listening.port,
    url: listening.url,
    close: () => {
      reports?.close();
      return listening.close();
    },
  };
}
