import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';

/**
 * A tiny OTLP/HTTP trace receiver on loopback: takes `POST /v1/traces` (protobuf ExportTraceServiceRequest,
 * decoded with the message definitions the exporter itself encodes with) and keeps every span.
 */

interface ProtoType {
  decode(bytes: Uint8Array): unknown;
  toObject(message: unknown, options: Record<string, unknown>): Record<string, unknown>;
}
const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js') as {
  opentelemetry: { proto: { collector: { trace: { v1: { ExportTraceServiceRequest: ProtoType } } } } };
};
const ExportTraceServiceRequest = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

type Attribute = { key: string; value: Record<string, unknown> };

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** '' for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
  /** 0 unset, 1 ok, 2 error. */
  statusCode: number;
  resource: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  url: string;
  spans: ReceivedSpan[];
  /** Content types of the requests received (the exporter's protocol). */
  contentTypes: string[];
  close(): Promise<void>;
}

const hex = (base64: unknown) => Buffer.from(typeof base64 === 'string' ? base64 : '', 'base64').toString('hex');
const valueOf = (v: Record<string, unknown>): unknown =>
  v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue ?? v.arrayValue;
const attributesOf = (list: unknown) =>
  Object.fromEntries(((list ?? []) as Attribute[]).map((a) => [a.key, valueOf(a.value)]));

function spansOf(body: Buffer): ReceivedSpan[] {
  const request = ExportTraceServiceRequest.toObject(ExportTraceServiceRequest.decode(body), {
    longs: Number,
    bytes: String,
    enums: Number,
  });
  const out: ReceivedSpan[] = [];
  for (const rs of (request.resourceSpans ?? []) as Record<string, unknown>[]) {
    const resource = attributesOf((rs.resource as Record<string, unknown> | undefined)?.attributes);
    for (const ss of (rs.scopeSpans ?? []) as Record<string, unknown>[]) {
      for (const s of (ss.spans ?? []) as Record<string, unknown>[]) {
        out.push({
          traceId: hex(s.traceId),
          spanId: hex(s.spanId),
          parentSpanId: hex(s.parentSpanId),
          name: String(s.name),
          kind: Number(s.kind ?? 0),
          attributes: attributesOf(s.attributes),
          links: ((s.links ?? []) as Record<string, unknown>[]).map((l) => ({
            traceId: hex(l.traceId),
            spanId: hex(l.spanId),
          })),
          statusCode: Number((s.status as Record<string, unknown> | undefined)?.code ?? 0),
          resource,
        });
      }
    }
  }
  return out;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const receiver: OtlpReceiver = { url: '', spans: [], contentTypes: [], close: async () => {} };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      receiver.contentTypes.push(req.headers['content-type'] ?? '');
      try {
        receiver.spans.push(...spansOf(Buffer.concat(chunks)));
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return receiver;
}
