import {
  context,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type SpanOptions,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/**
 * The service's own spans. Every helper here checks one flag first: with tracing off (no OTLP endpoint)
 * nothing is created, not even the API's no-op spans, and no context is read or written.
 */
let enabled = false;

/** Set by tracing.ts when this process's tracer provider is registered, and cleared when it is shut down. */
export function setTracingEnabled(on: boolean): void {
  enabled = on;
}

export function tracingEnabled(): boolean {
  return enabled;
}

const tracer = () => trace.getTracer('mailer');
const w3c = new W3CTraceContextPropagator();

/**
 * Runs `fn` in a new active span (a child of `parent`, else of the active context), ended when `fn`
 * settles; a thrown error is recorded on it. `fn` gets undefined when tracing is off.
 */
export async function inSpan<T>(
  name: string,
  options: SpanOptions & { parent?: Context },
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!enabled) return fn(undefined);
  const { parent, ...spanOptions } = options;
  return tracer().startActiveSpan(name, spanOptions, parent ?? context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

/** The active span's W3C `traceparent`, to store with work picked up later elsewhere; null when tracing is off or no span is active. */
export function activeTraceparent(): string | null {
  if (!enabled) return null;
  const carrier: Record<string, string> = {};
  w3c.inject(context.active(), carrier, defaultTextMapSetter);
  return carrier.traceparent ?? null;
}

/** The context a stored `traceparent` names (a remote parent), or undefined when there is none or it is malformed. */
export function contextOfTraceparent(traceparent: string | null | undefined): Context | undefined {
  if (!enabled || !traceparent) return undefined;
  const ctx = w3c.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter);
  return trace.getSpanContext(ctx) ? ctx : undefined;
}

/**
 * Where the span of work queued under `traceparent` belongs: in the trace it was queued from (its parent),
 * linked to the span running it now (a delivery activity), so either trace leads to the other. Without a
 * stored context it is simply a child of the running span.
 */
export function continuing(traceparent: string | null | undefined): { parent?: Context; links?: SpanOptions['links'] } {
  const queuedFrom = contextOfTraceparent(traceparent);
  if (queuedFrom === undefined) return {};
  const running = trace.getSpanContext(context.active());
  return { parent: queuedFrom, links: running ? [{ context: running }] : [] };
}

/** A link to the span a stored `traceparent` names, for work that follows from it without being part of it. */
export function spanLinkTo(traceparent: string | null | undefined): SpanOptions['links'] {
  const ctx = contextOfTraceparent(traceparent);
  const spanContext = ctx && trace.getSpanContext(ctx);
  return spanContext ? [{ context: spanContext }] : [];
}
