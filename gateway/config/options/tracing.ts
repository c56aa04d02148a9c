// Tracing (gateway/tracing/): kube-apiserver's one flag, naming an
// apiserver.config.k8s.io TracingConfiguration file; read and checked at start.
import { flagsOf, optionalPath, type OptionGroup } from './flag.js';

export interface TracingOptions {
  /** Without it nothing is traced and the request chain has no tracing step at all. */
  readonly tracingConfigFile: string | undefined;
}

const flag = flagsOf<TracingOptions>();

export const tracing: OptionGroup<TracingOptions> = {
  title: 'Tracing',
  defaults: { tracingConfigFile: undefined },
  flags: [
    flag({
      name: 'tracing-config-file',
      key: 'tracingConfigFile',
      arg: 'file',
      help: 'apiserver.config.k8s.io TracingConfiguration (endpoint, samplingRatePerMillion): spans exported by OTLP over HTTP; without it nothing is traced',
      parse: optionalPath,
    }),
  ],
};
