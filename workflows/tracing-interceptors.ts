// Workflow interceptors of OpenTelemetry tracing, bundled with every workflow (src/temporal/worker.ts).
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryInternalsInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow/index.js';
import type { WorkflowInterceptors, WorkflowInterceptorsFactory } from '@temporalio/workflow';

/** Where Temporal's client interceptor puts the trace context of a workflow's start. */
const TRACE_HEADER = '_tracer-data';

/**
 * Temporal's OpenTelemetry workflow interceptors, for a workflow whose start carried a trace context only:
 * that is, one started by a process that traces. Any other workflow runs as if they were not there (no
 * span is made, no sink called), so a bundle built once serves workers with tracing on and off alike, and
 * costs nothing when off. Whether a run is traced is read from its start's headers, which are part of its
 * history: a replay decides the same way.
 */
export const interceptors: WorkflowInterceptorsFactory = (): WorkflowInterceptors => {
  let traced: { outbound: OpenTelemetryOutboundInterceptor; internals: OpenTelemetryInternalsInterceptor } | undefined;
  return {
    inbound: [
      {
        execute(input, next) {
          if (input.headers[TRACE_HEADER] === undefined) return next(input);
          traced = {
            outbound: new OpenTelemetryOutboundInterceptor(),
            internals: new OpenTelemetryInternalsInterceptor(),
          };
          return new OpenTelemetryInboundInterceptor().execute(input, next);
        },
      },
    ],
    outbound: [
      {
        scheduleActivity: (input, next) => (traced ? traced.outbound.scheduleActivity(input, next) : next(input)),
        scheduleLocalActivity: (input, next) =>
          traced ? traced.outbound.scheduleLocalActivity(input, next) : next(input),
        startChildWorkflowExecution: (input, next) =>
          traced ? traced.outbound.startChildWorkflowExecution(input, next) : next(input),
        continueAsNew: (input, next) => (traced ? traced.outbound.continueAsNew(input, next) : next(input)),
        getLogAttributes: (input, next) => (traced ? traced.outbound.getLogAttributes(input, next) : next(input)),
      },
    ],
    internals: [
      {
        dispose(input, next) {
          // Theirs is async (it disables its context manager, then calls next at once).
          if (traced) void traced.internals.dispose(input, next);
          else next(input);
        },
      },
    ],
  };
};
