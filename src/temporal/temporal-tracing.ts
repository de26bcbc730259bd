import { createRequire } from 'node:module';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client/index.js';
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/worker/index.js';
import type { OpenTelemetrySinks } from '@temporalio/interceptors-opentelemetry';
import type { ClientInterceptors } from '@temporalio/client';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { Tracing } from '../telemetry/tracing.js';

const require = createRequire(import.meta.url);

/**
 * Temporal's own OpenTelemetry interceptors, when this process traces: starting a workflow is a span whose
 * context travels in the workflow's headers; the workflow's spans (made in the sandbox by
 * workflows/tracing-interceptors.ts) come out through a sink; each activity runs in a span continuing it.
 */
export function clientTracing(tracing: Pick<Tracing, 'enabled'>): ClientInterceptors | undefined {
  return tracing.enabled ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;
}

export const tracingActivityInterceptor: ActivityInterceptorsFactory = (ctx) => ({
  inbound: new OpenTelemetryActivityInboundInterceptor(ctx),
  outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
});

/**
 * The sink workflow spans leave the sandbox through. Registered whether or not this process traces: a
 * workflow started traced (its headers carry a trace context) may be replayed by a worker that does not,
 * and its spans are then dropped here.
 */
export function workflowSpanSinks(
  tracing: Pick<Tracing, 'spanProcessor' | 'resource'>,
): InjectedSinks<OpenTelemetrySinks> {
  if (tracing.spanProcessor && tracing.resource)
    return { exporter: makeWorkflowExporter(tracing.spanProcessor, tracing.resource) };
  return { exporter: { export: { fn: () => {}, callDuringReplay: false } } };
}

/** The workflow interceptor module (source in development, compiled in dist/), bundled with the workflows. */
export function workflowTracingModule(): string {
  try {
    return require.resolve('../../workflows/tracing-interceptors.ts');
  } catch {
    return require.resolve('../../workflows/tracing-interceptors.js');
  }
}
