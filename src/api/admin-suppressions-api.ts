import type { AdminService } from '../gen/mail/v1/admin_service_pb.js';
import type { SuppressionsService } from '../services/suppressions-service.js';
import { presentSuppression } from './admin-presenters.js';
import type { CallContext, Handlers } from './call-context.js';

type AccountSuppressionRpcs =
  'listSuppressions' | 'addAccountSuppression' | 'importAccountSuppressions' | 'exportAccountSuppressions';

/** The newest suppressions the management API's list answers (the CLI's `accounts suppressions` says so). */
export const ADMIN_SUPPRESSIONS_SHOWN = 1000;

/**
 * What REST serves beside the RPCs: an account's export as text streamed from a cursor (the RPC answers it in
 * one message). `rest-routes.ts` names it on the export's route.
 */
export interface AdminSuppressionStreams {
  streamAccountSuppressionsCsv(ctx: CallContext, req: { accountId: string }): Promise<AsyncIterable<string>>;
}

/** Runs a call once the admin token is admitted. */
type Admit = <T>(ctx: CallContext, run: () => Promise<T>) => Promise<T>;

/**
 * An account's suppression list for the console (mail.v1.AdminService): the operator acts as the account,
 * through the same use cases and rules as its API keys' suppression calls (suppressions-api.ts); an unknown
 * account is a 404. Removing one stays the management API's own DELETE /suppressions/:id (by id).
 */
export function adminSuppressionCalls(
  suppressions: SuppressionsService,
  admin: Admit,
): Pick<Handlers<typeof AdminService>, AccountSuppressionRpcs> & AdminSuppressionStreams {
  const inAccount = <T>(ctx: CallContext, accountId: string, run: () => Promise<T>) =>
    admin(ctx, async () => {
      await suppressions.assertAccount(accountId);
      return run();
    });

  return {
    listSuppressions: (req, ctx) =>
      inAccount(ctx, req.accountId, async () => {
        const { rows, total } = await suppressions.newest(req.accountId, req, ADMIN_SUPPRESSIONS_SHOWN);
        return { suppressions: rows.map(presentSuppression), total };
      }),
    addAccountSuppression: (req, ctx) =>
      inAccount(ctx, req.accountId, async () => presentSuppression(await suppressions.add(req.accountId, req))),
    importAccountSuppressions: (req, ctx) =>
      inAccount(ctx, req.accountId, async () => suppressions.import(req.accountId, req.csv)),
    exportAccountSuppressions: (req, ctx) =>
      inAccount(ctx, req.accountId, async () => ({ csv: await suppressions.exportText(req.accountId) })),
    streamAccountSuppressionsCsv: (ctx, req) =>
      inAccount(ctx, req.accountId, () => suppressions.openExport(req.accountId)),
  };
}
