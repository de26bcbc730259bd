import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { SuppressionsService } from '../services/suppressions-service.js';
import type { CallContext, Handlers } from './call-context.js';
import { permitting, type Guard } from './guard.js';
import { presentSuppressionEntry } from './suppression-presenters.js';

type SuppressionRpcs =
  'searchSuppressions' | 'addSuppression' | 'removeSuppression' | 'importSuppressions' | 'exportSuppressions';

/**
 * What REST serves beside the RPCs: the export as text streamed from a cursor (the RPC answers it in one
 * message). `rest-routes.ts` names it on the export's route.
 */
export interface SuppressionStreams {
  streamSuppressionsCsv(ctx: CallContext): Promise<AsyncIterable<string>>;
}

export interface SuppressionsApiDeps {
  guard: Guard;
  suppressions: SuppressionsService;
}

/**
 * The suppression RPCs of mail.v1.EmailService (CONTRACT.md "Streams, one-click unsubscribe and suppressions").
 * Changing the list needs a key with permission `all`; reading it, `all` or `read_only` (a `send_only` key sends,
 * it does not read whom the account no longer mails).
 */
export function createSuppressionsApi(
  deps: SuppressionsApiDeps,
): Pick<Handlers<typeof EmailService>, SuppressionRpcs> & SuppressionStreams {
  const { suppressions } = deps;
  const manage = permitting(deps.guard, 'manage_suppressions');
  const read = permitting(deps.guard, 'read_suppressions');

  return {
    searchSuppressions: (req, ctx) =>
      read(ctx, async (a) => {
        const { rows, total } = await suppressions.list(a, req);
        return { suppressions: rows.map(presentSuppressionEntry), total };
      }),
    addSuppression: (req, ctx) => manage(ctx, async (a) => presentSuppressionEntry(await suppressions.add(a, req))),
    removeSuppression: (req, ctx) =>
      manage(ctx, async (a) => {
        const removed = await suppressions.remove(a, req);
        return { success: true, message: `${removed} suppression${removed === 1 ? '' : 's'} of ${req.email} removed` };
      }),
    importSuppressions: (req, ctx) => manage(ctx, async (a) => suppressions.import(a, req.csv)),
    exportSuppressions: (_req, ctx) => read(ctx, async (a) => ({ csv: await suppressions.exportText(a) })),
    streamSuppressionsCsv: (ctx) => read(ctx, (a) => suppressions.openExport(a)),
  };
}
