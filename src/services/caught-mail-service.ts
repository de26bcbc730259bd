import type { CaughtMessageRow, CaughtMessagesRepo } from '../db/repos/caught-messages-repo.js';
import { invalid } from '../errors.js';

const LIST_MAX = 500;

/** What the built-in catcher received, newest first. */
export function createCaughtMailService(deps: { caught: Pick<CaughtMessagesRepo, 'list'> }) {
  return {
    async list(limit: number): Promise<CaughtMessageRow[]> {
      if (limit < 0 || limit > LIST_MAX) throw invalid(`limit must be from 1 to ${LIST_MAX}; got ${limit}`);
      return deps.caught.list(limit === 0 ? 50 : limit);
    },
  };
}
export type CaughtMailService = ReturnType<typeof createCaughtMailService>;
