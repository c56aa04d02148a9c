// Admission plugins run after authorization.
import { ConfigError } from '../../../lib/config/error.js';
import { csv, flagsOf, type OptionGroup } from './flag.js';

/** Admission plugins the two flags accept. */
export const ADMISSION_PLUGINS = ['LimitRanger', 'NodeRestriction', 'ResourceQuota', 'ServiceAccount'] as const;
export type AdmissionPluginName = (typeof ADMISSION_PLUGINS)[number];

/** The plugins kube-apiserver runs unless --disable-admission-plugins names them. */
export const DEFAULT_ADMISSION_PLUGINS: readonly AdmissionPluginName[] = ['LimitRanger', 'ResourceQuota', 'ServiceAccount'];

export interface AdmissionOptions {
  readonly enableAdmissionPlugins: readonly AdmissionPluginName[];
  readonly disableAdmissionPlugins: readonly AdmissionPluginName[];
}

/** The optional plugins in force: the defaults not disabled, and the enabled ones. */
export function admissionPluginsOf(o: AdmissionOptions): readonly AdmissionPluginName[] {
  return [...new Set([...DEFAULT_ADMISSION_PLUGINS, ...o.enableAdmissionPlugins])].filter((p) => !o.disableAdmissionPlugins.includes(p));
}

const flag = flagsOf<AdmissionOptions>();

const pluginList = (raw: string) =>
  csv(raw).map((n) => {
    if (!(ADMISSION_PLUGINS as readonly string[]).includes(n))
      throw new ConfigError(`unknown or unsupported admission plugin (supported: ${ADMISSION_PLUGINS.join(', ')})`, { value: n });
    return n as AdmissionPluginName;
  });

export const admission: OptionGroup<AdmissionOptions> = {
  title: 'Admission',
  defaults: {
    enableAdmissionPlugins: [],
    disableAdmissionPlugins: [],
  },
  flags: [
    flag({
      name: 'enable-admission-plugins',
      key: 'enableAdmissionPlugins',
      arg: 'plugin,…',
      list: true,
      help: `Admission plugins to run besides the default ones (${DEFAULT_ADMISSION_PLUGINS.join(', ')}): ${ADMISSION_PLUGINS.join(', ')}`,
      parse: pluginList,
    }),
    flag({
      name: 'disable-admission-plugins',
      key: 'disableAdmissionPlugins',
      arg: 'plugin,…',
      list: true,
      help: `Default admission plugins not to run: ${DEFAULT_ADMISSION_PLUGINS.join(', ')}`,
      parse: pluginList,
    }),
  ],
  // kube-apiserver refuses a plugin named by both flags.
  checks(o) {
    const both = o.enableAdmissionPlugins.filter((p) => o.disableAdmissionPlugins.includes(p));
    return both.length ? [`${both.join(', ')} in --enable-admission-plugins and --disable-admission-plugins`] : [];
  },
};
