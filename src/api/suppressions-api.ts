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

  /** The export's lines, as they come from the cursor; the first chunk read before anything is answered. */
  const exportLines = (ctx: CallContext) =>
    read(ctx, async (a) => {
      const lines = suppressions.exportCsv(a);
      const first = await lines.next();
      return { first, lines };
    });

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
    exportSuppressions: (_req, ctx) =>
      exportLines(ctx).then(async ({ first, lines }) => {
        let csv = first.done ? '' : first.value;
        for await (const chunk of lines) csv += chunk;
        return { csv };
      }),
    async streamSuppressionsCsv(ctx) {
      const { first, lines } = await exportLines(ctx);
      return (async function* () {
        if (!first.done) yield first.value;
        yield* lines;
      })();
    },
  };
}
