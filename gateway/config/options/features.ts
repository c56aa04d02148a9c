// Feature gates.
import { FEATURE_GATE_DEFAULTS, FeatureGateError, featureGateHelp, parseFeatureGates, type FeatureGates } from '../featuregates.js';
import { BadValue, flagsOf, type OptionGroup } from './flag.js';

export interface FeatureOptions {
  readonly featureGates: FeatureGates;
}

const flag = flagsOf<FeatureOptions>();

export const features: OptionGroup<FeatureOptions> = {
  title: 'Features',
  defaults: {
    featureGates: FEATURE_GATE_DEFAULTS,
  },
  flags: [
    flag({ name: 'feature-gates', key: 'featureGates', arg: 'Name=bool,…',
      help: `Feature gates (a later --feature-gates adds to an earlier one):\n${featureGateHelp().map((l) => `${' '.repeat(45)}${l}`).join('\n')}`,
      parse: (raw) => {
        try { return parseFeatureGates(raw); } catch (err) {
          if (err instanceof FeatureGateError) throw new BadValue(err.message, err.value);
          throw err;
        }
      } }),
  ],
};
