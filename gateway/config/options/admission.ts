// Admission plugins run after authorization.
import { ConfigError } from '../../../lib/config/error.js';
import { csv, flagsOf, type OptionGroup } from './flag.js';

/** Admission plugins --enable-admission-plugins accepts. */
export const ADMISSION_PLUGINS = ['NodeRestriction'] as const;
export type AdmissionPluginName = (typeof ADMISSION_PLUGINS)[number];

export interface AdmissionOptions {
  readonly enableAdmissionPlugins: readonly AdmissionPluginName[];
}

const flag = flagsOf<AdmissionOptions>();

export const admission: OptionGroup<AdmissionOptions> = {
  title: 'Admission',
  defaults: {
    enableAdmissionPlugins: [],
  },
  flags: [
    flag({
      name: 'enable-admission-plugins',
      key: 'enableAdmissionPlugins',
      arg: 'plugin,…',
      list: true,
      help: `Admission plugins to run: ${ADMISSION_PLUGINS.join(', ')}`,
      parse: (raw) =>
        csv(raw).map((n) => {
          if (!(ADMISSION_PLUGINS as readonly string[]).includes(n))
            throw new ConfigError(`unknown or unsupported admission plugin (supported: ${ADMISSION_PLUGINS.join(', ')})`, { value: n });
          return n as AdmissionPluginName;
        }),
    }),
  ],
};
