/**
 * OTEL_RESOURCE_ATTRIBUTES as the OpenTelemetry specification writes it: `key=value` pairs separated by
 * commas, values percent-encoded. A malformed pair refuses the start rather than lose attributes silently.
 */
export function parseResourceAttributes(raw: string): Record<string, string> {
  const attributes: Record<string, string> = {};
  for (const pair of raw.split(',').map((p) => p.trim()).filter((p) => p !== '')) {
    const at = pair.indexOf('=');
    const key = pair.slice(0, at).trim();
    if (at <= 0 || key === '') throw new Error(`OTEL_RESOURCE_ATTRIBUTES must be key=value pairs separated by commas, got "${pair}"`);
    try {
      attributes[key] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      throw new Error(`OTEL_RESOURCE_ATTRIBUTES: the value of ${key} is not valid percent-encoding`);
    }
  }
  return attributes;
}
