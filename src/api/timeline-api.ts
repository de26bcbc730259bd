import { Code, ConnectError } from '@connectrpc/connect';
import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { Handlers } from './call-context.js';
import type { Guard } from './guard.js';

// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled in with the events service (issue 27)
export interface TimelineApiDeps {}

const notYet = (): never => {
  throw new ConnectError('email timelines are not built yet', Code.Unimplemented);
};

/** GET /emails/:id/events (CONTRACT.md "Stats and timelines"), and the console's template preview. */
export function createTimelineApi(
  _deps: TimelineApiDeps & { guard: Guard },
): Pick<Handlers<typeof EmailService>, 'listEmailEvents' | 'previewTemplate'> {
  return { listEmailEvents: notYet, previewTemplate: notYet };
}
