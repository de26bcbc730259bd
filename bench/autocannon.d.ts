// The part of autocannon 8's API the bench uses (the package ships no types).
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  namespace autocannon {
    interface Client extends EventEmitter {
      setHeaders(headers: Record<string, string>): void;
      setBody(body: string | Buffer): void;
      setHeadersAndBody(headers: Record<string, string>, body: string | Buffer): void;
    }
    interface Options {
      url: string;
      connections?: number;
      duration?: number;
      amount?: number;
      method?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
      /** Requests per second per connection (autocannon sends them as a burst at each second's start). */
      connectionRate?: number;
      overallRate?: number;
      timeout?: number;
      pipelining?: number;
      setupClient?: (client: Client) => void;
    }
    interface Result {
      duration: number;
      start: Date;
      finish: Date;
      errors: number;
      timeouts: number;
      non2xx: number;
      '2xx': number;
      statusCodeStats: Record<string, { count: number }>;
      requests: { average: number; total: number; sent: number };
      latency: { p50: number; p99: number; average: number; max: number };
    }
    interface Instance extends EventEmitter {
      stop(): void;
      on(
        event: 'response',
        listener: (client: Client, statusCode: number, resBytes: number, responseTime: number) => void,
      ): this;
      on(event: string, listener: (...args: unknown[]) => void): this;
    }
  }

  function autocannon(
    options: autocannon.Options,
    callback: (err: Error | null, result: autocannon.Result) => void,
  ): autocannon.Instance;
  export = autocannon;
}
