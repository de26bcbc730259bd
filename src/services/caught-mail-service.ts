import { simpleParser } from 'mailparser';
import type { CaughtMessageRow } from '../domain/entities/caught-messages.js';
import type { CaughtMessagesRepo } from '../db/index.js';
import { invalid, notFound } from '../errors.js';

export const LIST_MAX = 500;
export const LIST_DEFAULT = 50;

/** What the built-in catcher received, newest first. */
export function createCaughtMailService(deps: { caught: Pick<CaughtMessagesRepo, 'list' | 'get'> }) {
  return {
    /** One message parsed for display: its HTML (to be shown sandboxed), text and headers. */
    async get(
      id: string,
    ): Promise<{ row: CaughtMessageRow; html: string; text: string; headers: Record<string, string> }> {
      const row = await deps.caught.get(id);
      if (!row) throw notFound('caught message', id);
      const parsed = await simpleParser(row.raw, { skipImageLinks: true });
      const headers: Record<string, string> = {};
      for (const line of parsed.headerLines) headers[line.key] = line.line.slice(line.line.indexOf(':') + 1).trim();
      return { row, html: typeof parsed.html === 'string' ? parsed.html : '', text: parsed.text ?? '', headers };
    },

    async list(limit: number): Promise<CaughtMessageRow[]> {
      if (limit < 0 || limit > LIST_MAX) throw invalid(`limit must be from 1 to ${LIST_MAX}; got ${limit}`);
      return deps.caught.list(limit === 0 ? LIST_DEFAULT : limit);
    },
  };
}
export type CaughtMailService = ReturnType<typeof createCaughtMailService>;
