import type { EmailService } from '../gen/mail/v1/email_service_pb.js';
import type { EventsService } from '../services/events-service.js';
import { renderedFields, type TemplateRenderer } from '../services/template-renderer.js';
import type { Handlers } from './call-context.js';
import { presentMailEvent } from './event-presenter.js';
import { permitting, type Guard } from './guard.js';
import { contentInput } from './template-input.js';

export interface TimelineApiDeps {
  events: Pick<EventsService, 'ofEmail'>;
  renderer: Pick<TemplateRenderer, 'preview'>;
}

/** GET /emails/:id/events (CONTRACT.md "Stats and timelines"), and the console's template preview. */
export function createTimelineApi(
  deps: TimelineApiDeps & { guard: Guard },
): Pick<Handlers<typeof EmailService>, 'listEmailEvents' | 'previewTemplate'> {
  // Content that is not stored, but is what a template editor is about to store: the permission to change
  // templates (as the management API's preview is the operator's, acting as the account).
  const manage = permitting(deps.guard, 'manage_templates');
  return {
    // Each event exactly as GET /events (and its webhook body) shows it: the same presenter.
    listEmailEvents: (req, ctx) =>
      deps.guard.guarded(ctx, async (p) => ({
        events: (await deps.events.ofEmail(p, req.id)).map(presentMailEvent),
      })),
    previewTemplate: (req, ctx) =>
      manage(ctx, async () =>
        renderedFields(
          deps.renderer.preview(contentInput(req), { variables: req.sampleVariables, locale: req.locale }),
        ),
      ),
  };
}
