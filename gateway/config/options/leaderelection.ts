// kube-controller-manager's leader election flags (component-base's
// LeaderElectionConfiguration): the Lease the controllers' leader holds and
// its timing. The rules are client-go's NewLeaderElector checks, named by flag.
import { ConfigError } from '../../../lib/config/error.js';
import { isDNS1123Label, isDNS1123Subdomain } from '../../../lib/registry/names.js';
import { bool, duration, flagsOf, type OptionGroup } from './flag.js';
import { JITTER_FACTOR } from '../../../backends/core/controllers/leaderelection/timing.js';

export interface LeaderElectionOptions {
  readonly leaderElect: boolean;
  readonly leaderElectLeaseDurationMs: number;
  readonly leaderElectRenewDeadlineMs: number;
  readonly leaderElectRetryPeriodMs: number;
  readonly leaderElectResourceNamespace: string;
  readonly leaderElectResourceName: string;
}

const flag = flagsOf<LeaderElectionOptions>();

function named(check: (v: string) => string[]): (raw: string) => string {
  return (raw) => {
    const errs = check(raw);
    if (errs.length > 0) throw new ConfigError(errs.join('; '));
    return raw;
  };
}

export const leaderElection: OptionGroup<LeaderElectionOptions> = {
  title: 'Leader election',
  defaults: {
    leaderElect: true,
    leaderElectLeaseDurationMs: 15_000,
    leaderElectRenewDeadlineMs: 10_000,
    leaderElectRetryPeriodMs: 2_000,
    leaderElectResourceNamespace: 'kube-system',
    leaderElectResourceName: 'gatehouse-controllers',
  },
  flags: [
    flag({
      name: 'leader-elect',
      key: 'leaderElect',
      arg: '',
      boolean: true,
      help: "Run kube-controller-manager's controllers only in the process holding the leader Lease (false: in this process, unconditionally)",
      parse: bool,
    }),
    flag({
      name: 'leader-elect-lease-duration',
      key: 'leaderElectLeaseDurationMs',
      arg: 'duration',
      help: 'How long candidates wait after the last observed renewal before taking the lease',
      parse: (raw) => duration(raw, true),
    }),
    flag({
      name: 'leader-elect-renew-deadline',
      key: 'leaderElectRenewDeadlineMs',
      arg: 'duration',
      help: 'How long the leader keeps trying to renew before it stops its controllers',
      parse: (raw) => duration(raw, true),
    }),
    flag({
      name: 'leader-elect-retry-period',
      key: 'leaderElectRetryPeriodMs',
      arg: 'duration',
      help: 'How often candidates try to acquire and the leader renews',
      parse: (raw) => duration(raw, true),
    }),
    flag({
      name: 'leader-elect-resource-namespace',
      key: 'leaderElectResourceNamespace',
      arg: 'namespace',
      help: "The leader Lease's namespace",
      parse: named(isDNS1123Label),
    }),
    flag({
      name: 'leader-elect-resource-name',
      key: 'leaderElectResourceName',
      arg: 'name',
      help: "The leader Lease's name",
      parse: named(isDNS1123Subdomain),
    }),
  ],
  checks(o) {
    if (!o.leaderElect) return [];
    const out: string[] = [];
    if (o.leaderElectRenewDeadlineMs >= o.leaderElectLeaseDurationMs)
      out.push('--leader-elect-lease-duration must be greater than --leader-elect-renew-deadline');
    if (o.leaderElectRenewDeadlineMs <= JITTER_FACTOR * o.leaderElectRetryPeriodMs)
      out.push(`--leader-elect-renew-deadline must be greater than ${JITTER_FACTOR} × --leader-elect-retry-period`);
    return out;
  },
};
