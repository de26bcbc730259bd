import { trace } from '@opentelemetry/api';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { activeTraceparent, inSpan, tracingEnabled } from '../../src/telemetry/spans.js';
import { startTracing, tracesUrl } from '../../src/telemetry/tracing.js';

const logger = createLogger('silent', 'test');
const settings = (env: Record<string, string>) => loadConfig({ ...env });

describe('tracing settings', () => {
  it("sends traces to the traces endpoint as given, else to the base endpoint's /v1/traces, else nowhere", () => {
    expect(tracesUrl(settings({}))).toBeUndefined();
    expect(tracesUrl(settings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }))).toBe(
      'http://collector:4318/v1/traces',
    );
    expect(
      tracesUrl(
        settings({
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
          OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://other/x',
        }),
      ),
    ).toBe('http://other/x');
  });

  it('reads OTEL_RESOURCE_ATTRIBUTES as the specification writes it and refuses a malformed one', () => {
    expect(settings({ OTEL_RESOURCE_ATTRIBUTES: 'a=1, b = two%20words ,c=x=y' }).otelResourceAttributes).toEqual({
      a: '1',
      b: 'two words',
      c: 'x=y',
    });
    expect(settings({}).otelResourceAttributes).toEqual({});
    expect(() => settings({ OTEL_RESOURCE_ATTRIBUTES: 'novalue' })).toThrow(/key=value/);
    expect(() => settings({ OTEL_RESOURCE_ATTRIBUTES: 'a=%zz' })).toThrow(/percent-encoding/);
  });

  it('costs nothing when off: no span is made and no context read', async () => {
    const tracing = startTracing(settings({}), logger);
    expect(tracing.enabled).toBe(false);
    expect(tracingEnabled()).toBe(false);
    expect(await inSpan('x', {}, async (span) => span)).toBeUndefined();
    expect(activeTraceparent()).toBeNull();
  });

  it('shares one process-wide provider between mailers, and the last stop lets a later start register again', async () => {
    const on = settings({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    // Spans stay in memory: the export over OTLP is test/integration/tracing.test.ts's.
    const inMemory = () => new InMemorySpanExporter();
    const first = startTracing(on, logger, inMemory);
    const second = startTracing(on, logger, inMemory);
    expect(tracingEnabled()).toBe(true);
    const provider = trace.getTracerProvider();
    await first.stop();
    await first.stop();
    // The second mailer still traces, through the same provider.
    expect(tracingEnabled()).toBe(true);
    expect(await inSpan('still', {}, async () => activeTraceparent())).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    await second.stop();
    expect(tracingEnabled()).toBe(false);

    const third = startTracing(on, logger, inMemory);
    expect(tracingEnabled()).toBe(true);
    expect(trace.getTracerProvider()).not.toBe(provider);
    expect(await inSpan('again', {}, async (span) => span?.spanContext().traceId)).toMatch(/^[0-9a-f]{32}$/);
    await third.stop();
  });
});
