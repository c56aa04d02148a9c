// Metrics (lib/metrics/): kube's component-base metrics option, the escape
// hatch that serves again the deprecated metrics this release hides.
import { KUBE_MAJOR, KUBE_MINOR } from '../../../lib/discovery/version.js';
import { checkShowHiddenVersion, VersionError } from '../../../lib/metrics/lifecycle.js';
import { ConfigError } from '../../../lib/config/error.js';
import { flagsOf, type OptionGroup } from './flag.js';

export interface MetricsOptions {
  /** The previous release (`1.32` when serving 1.33), or undefined: hidden metrics stay hidden. */
  readonly showHiddenMetricsForVersion: string | undefined;
}

const flag = flagsOf<MetricsOptions>();
const CURRENT = { major: Number(KUBE_MAJOR), minor: Number(KUBE_MINOR) };

export const metrics: OptionGroup<MetricsOptions> = {
  title: 'Metrics',
  defaults: { showHiddenMetricsForVersion: undefined },
  flags: [
    flag({
      name: 'show-hidden-metrics-for-version',
      key: 'showHiddenMetricsForVersion',
      arg: 'major.minor',
      help: `Serve again the deprecated metrics that this release hides; only the previous minor version (${CURRENT.major}.${CURRENT.minor - 1}) is accepted`,
      parse: (raw) => {
        if (raw === '') return undefined;
        try {
          checkShowHiddenVersion(raw, CURRENT);
        } catch (err) {
          if (err instanceof VersionError)
            throw new ConfigError(`must be omitted or have the value '${CURRENT.major}.${CURRENT.minor - 1}' (only the previous minor version is allowed)`);
          throw err;
        }
        return raw;
      },
    }),
  ],
};
