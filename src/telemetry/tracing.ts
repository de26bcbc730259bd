import { context, diag, DiagLogLevel, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { Resource } from '@opentelemetry/resources';
import { BatchSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Logger } from '../logger.js';
import { setTracingEnabled } from './spans.js';

export interface TracingSettings {
  otlpEndpoint: string | undefined;
  otlpTracesEndpoint: string | undefined;
  otelServiceName: string | undefined;
  otelResourceAttributes: Record<string, string>;
  otelExportDelayMs: number;
}

/** This process's tracing, as the parts that add spans of their own (Temporal's interceptors) need it. */
export interface Tracing {
  enabled: boolean;
  /** Where Temporal's workflow spans (made in the sandbox, handed out through a sink) go; set when enabled. */
  spanProcessor: SpanProcessor | undefined;
  resource: Resource | undefined;
  /** Sends the spans not sent yet; the last user of the process's provider also shuts it down. */
  stop(): Promise<void>;
}

const OFF: Tracing = { enabled: false, spanProcessor: undefined, resource: undefined, stop: async () => {} };

/** Where traces go: the traces endpoint as it is, else the base endpoint's /v1/traces (the OTLP/HTTP rule). */
export function tracesUrl(settings: Pick<TracingSettings, 'otlpEndpoint' | 'otlpTracesEndpoint'>): string | undefined {
  if (settings.otlpTracesEndpoint) return settings.otlpTracesEndpoint;
  if (settings.otlpEndpoint) return `${settings.otlpEndpoint.replace(/\/+$/, '')}/v1/traces`;
  return undefined;
}

/**
 * The OpenTelemetry API keeps one tracer provider, context manager and propagator per process, so one
 * provider serves every mailer started in it (tests start many): the first start with an endpoint makes
 * and registers it, later ones share it, and the last stop shuts it down and unregisters it, so a later
 * start may register a new one.
 */
let shared:
  | { url: string; provider: NodeTracerProvider; processor: SpanProcessor; resource: Resource; users: number }
  | undefined;

/** Spans go over OTLP/protobuf; unit tests pass an in-memory exporter (they open no socket). */
const otlpExporter = (url: string): SpanExporter => new OTLPTraceExporter({ url });

export function startTracing(settings: TracingSettings, logger: Logger, exporterFor = otlpExporter): Tracing {
  const url = tracesUrl(settings);
  if (url === undefined) return OFF;
  if (shared) {
    if (shared.url !== url)
      logger.warn(
        { url: shared.url, ignored: url },
        'tracing is already set up in this process; spans go to its endpoint',
      );
    shared.users += 1;
  } else {
    shared = createProvider(url, settings, exporterFor(url));
    // The SDK's own complaints (an export the collector refused or never answered) go to our log.
    diag.setLogger(
      {
        error: (message, ...args) => logger.warn({ args }, `tracing: ${message}`),
        warn: (message, ...args) => logger.warn({ args }, `tracing: ${message}`),
        info: () => {},
        debug: () => {},
        verbose: () => {},
      },
      DiagLogLevel.WARN,
    );
    logger.info({ url }, 'tracing: spans are exported over OTLP');
  }
  const { processor, resource } = shared;
  let stopped = false;
  return {
    enabled: true,
    spanProcessor: processor,
    resource,
    async stop() {
      if (stopped || !shared) return;
      stopped = true;
      shared.users -= 1;
      // A collector that is down must not fail the stop: the spans are lost, and said so.
      const lost = (err: unknown) => logger.warn({ err }, 'tracing: the last spans could not be sent');
      if (shared.users > 0) return processor.forceFlush().catch(lost);
      const { provider } = shared;
      shared = undefined;
      setTracingEnabled(false);
      await provider.shutdown().catch(lost);
      trace.disable();
      context.disable();
      propagation.disable();
      diag.disable();
    },
  };
}

function createProvider(url: string, settings: TracingSettings, exporter: SpanExporter) {
  // OTEL_SERVICE_NAME wins over a service.name among OTEL_RESOURCE_ATTRIBUTES, as the specification says.
  const attributes = settings.otelResourceAttributes;
  const resource = new Resource({
    ...attributes,
    'service.name': settings.otelServiceName ?? attributes['service.name'] ?? 'mailer',
  });
  const processor = new BatchSpanProcessor(exporter, { scheduledDelayMillis: settings.otelExportDelayMs });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [processor] });
  // The W3C trace-context propagator and the AsyncLocalStorage context manager, process-wide.
  provider.register();
  setTracingEnabled(true);
  return { url, provider, processor, resource, users: 1 };
}
