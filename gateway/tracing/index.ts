// Builds request tracing from --tracing-config-file: nothing without the flag
// (the chain then has no tracing step at all); with it, the SDK's tracer
// provider — kube's sampling, ParentBased(TraceIdRatioBased(rate / 10^6)), the ratio rolled by RequestTracing before a root span is made —
// batching spans to the OTLP/HTTP (JSON) exporter. A file that cannot be read
// or does not parse stops the start with a message naming the file and field.
// The SDK and the exporter (sdk.ts) are imported only then: ~3 MB of heap a server without tracing would carry into every full
// collection.
import { readFile } from 'node:fs/promises';
import { ConfigError } from '../../lib/config/error.js';
import type { TracingOptions } from '../config/options/tracing.js';
import { parseTracingConfiguration } from './config.js';
import { RequestTracing } from './requests.js';

export { RequestTracing, serverSpanName } from './requests.js';
export { parseTracingConfiguration, type TracingConfiguration } from './config.js';

export interface Tracing {
  readonly requests: RequestTracing;
  /** Sends what is buffered, then stops exporting (shutdown). */
  shutdown(): Promise<void>;
}

export interface TracingHooks {
  log(msg: string): void;
  clock(): number;
  /** How long finished spans wait to be sent together (the SDK's default, 5 s; tests shorten it). */
  batchDelayMs?: number;
  /** The resource's service.name: kube's `apiserver` for the gateway, the command's name for a backend process. */
  serviceName?: string;
  /** How long shutdown waits for buffered spans to be sent (SHUTDOWN_MS; tests shorten it). */
  shutdownMs?: number;
  /** How long one export may take, retries included (the exporter's default, 10 s; tests shorten it). */
  exportTimeoutMs?: number;
}

/**
 * Shutdown's wait for the last spans: a collector that is down made the
 * exporter retry for about 8 s, and a hung one would hold shutdown for its
 * 10 s export timeout; what is not sent by then is lost (and logged).
 */
export const SHUTDOWN_MS = 2_000;

export async function buildTracing(o: TracingOptions, hooks: TracingHooks): Promise<Tracing | undefined> {
  if (o.tracingConfigFile === undefined) return undefined;
  const source = `--tracing-config-file ${o.tracingConfigFile}`;
  let text: string;
  try {
    text = await readFile(o.tracingConfigFile, 'utf8');
  } catch (err) {
    throw new ConfigError(err instanceof Error ? err.message : String(err), { file: source });
  }
  const config = parseTracingConfiguration(text, source);
  const { startProvider } = await import('./sdk.js');
  const provider = startProvider(config.url, hooks);
  hooks.log(`tracing: ${config.samplingRatePerMillion} per million requests without a sampled parent; spans to ${config.url}`);
  return {
    requests: new RequestTracing(provider.getTracer('k8s.io/apiserver'), config.samplingRatePerMillion / 1_000_000),
    // What cannot be sent at shutdown is lost (and logged): it must neither fail nor hold the shutdown.
    shutdown: () => {
      const ms = hooks.shutdownMs ?? SHUTDOWN_MS;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => {
        timer = setTimeout(() => {
          hooks.log(`tracing: spans not sent to ${config.url} within ${ms / 1000} s of shutdown are lost`);
          resolve();
        }, ms);
        timer.unref();
      });
      const sent = provider
        .shutdown()
        .catch((err: unknown) => hooks.log(`tracing: spans lost at shutdown: ${err instanceof Error ? err.message : String(err)}`));
      return Promise.race([sent, late]).finally(() => clearTimeout(timer));
    },
  };
}
