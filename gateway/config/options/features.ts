// Feature gates.
import { FEATURE_GATE_DEFAULTS, featureGateHelp, parseFeatureGates, type FeatureGates } from '../featuregates.js';
import { DEFAULT_RUNTIME_CONFIG, parseRuntimeConfig, runtimeConfigChecks, type RuntimeConfig } from '../runtimeconfig.js';
import { flagsOf, type OptionGroup } from './flag.js';

export interface FeatureOptions {
  readonly featureGates: FeatureGates;
  /** --runtime-config: which served group versions and resources are on. */
  readonly runtimeConfig: RuntimeConfig;
}

const flag = flagsOf<FeatureOptions>();

export const features: OptionGroup<FeatureOptions> = {
  title: 'API enablement and feature',
  defaults: {
    featureGates: FEATURE_GATE_DEFAULTS,
    runtimeConfig: DEFAULT_RUNTIME_CONFIG,
  },
  flags: [
    flag({
      name: 'feature-gates',
      key: 'featureGates',
      arg: 'Name=bool,…',
      help: `Feature gates (a later --feature-gates adds to an earlier one):\n${featureGateHelp()
        .map((l) => `${' '.repeat(45)}${l}`)
        .join('\n')}`,
      parse: (raw, prev) => parseFeatureGates(raw, prev),
    }),
    flag({
      name: 'runtime-config',
      key: 'runtimeConfig',
      arg: 'key=bool,…',
      help: 'Turn served APIs on or off: api/all, api/ga, api/beta, api/alpha, <group>/<version>, <group>/<version>/<resource> (core: v1); disabled ones leave discovery and answer 404 (a later --runtime-config adds to an earlier one)',
      parse: (raw, prev) => parseRuntimeConfig(raw, prev),
    }),
  ],
  checks(o) {
    return runtimeConfigChecks(o.runtimeConfig, o);
  },
};
