// The core backend controllers (as kube-controller-manager --controllers).
import type { ServeOptions } from '../flags.js';
import { ConfigError } from '../../../lib/config/error.js';
import { csv, duration, flagsOf, type OptionGroup } from './flag.js';

/** Controllers of the core backend that --controllers names; `*` = the ones on by default. */
export const CONTROLLERS = [
  'serviceaccount-token',
  'serviceaccount',
  'root-ca-cert-publisher',
  'tokencleaner',
  'bootstrapsigner',
  'csrsigning',
  'csrapproving',
  'csrcleaner',
  'resourcequota',
] as const;
/** Off under `*` unless --enable-bootstrap-token-auth (kube-controller-manager keeps them off by default too). */
export const CONTROLLERS_OFF_BY_DEFAULT: ReadonlySet<string> = new Set(['tokencleaner', 'bootstrapsigner']);

function controllerNames(raw: string): string[] {
  const names = csv(raw);
  if (names.length === 0) throw new ConfigError('at least one controller name or * is required');
  for (const n of names) {
    const bare = n.startsWith('-') ? n.slice(1) : n;
    if (n !== '*' && !(CONTROLLERS as readonly string[]).includes(bare))
      throw new ConfigError(`unknown controller (*, ${CONTROLLERS.join(', ')}, or -name to disable)`, { value: n });
  }
  return names;
}

/** Whether a controller runs, from the --controllers list (the last mention wins, as in kube-controller-manager). */
export function controllerEnabled(o: Pick<ServeOptions, 'controllers' | 'enableBootstrapTokenAuth'>, name: (typeof CONTROLLERS)[number]): boolean {
  if (o.controllers.includes(`-${name}`)) return false;
  if (o.controllers.includes(name)) return true;
  if (!o.controllers.includes('*')) return false;
  return !CONTROLLERS_OFF_BY_DEFAULT.has(name) || o.enableBootstrapTokenAuth;
}

export interface ControllerOptions {
  /** kube-controller-manager style: `*`, names, `-name`; see CONTROLLERS. */
  readonly controllers: readonly string[];
  /** --resource-quota-sync-period: how often the resourcequota controller counts every quota again. */
  readonly resourceQuotaSyncPeriodMs: number;
}

const flag = flagsOf<ControllerOptions>();

export const controllers: OptionGroup<ControllerOptions> = {
  title: 'Controllers',
  defaults: {
    controllers: ['*'],
    resourceQuotaSyncPeriodMs: 5 * 60_000,
  },
  flags: [
    flag({
      name: 'controllers',
      key: 'controllers',
      arg: 'name,…',
      list: true,
      help: `Core controllers to run: * (defaults), ${CONTROLLERS.join(', ')}, -name disables`,
      parse: controllerNames,
    }),
    flag({
      name: 'resource-quota-sync-period',
      key: 'resourceQuotaSyncPeriodMs',
      arg: 'duration',
      help: 'How often the resourcequota controller counts the usage of every quota again (kube-controller-manager default 5m)',
      parse: (raw) => duration(raw, true),
    }),
  ],
};
