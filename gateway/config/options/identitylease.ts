// kube-apiserver's server identity lease (APIServerIdentity): its duration
// and renew interval, kube's hidden flags of the same names.
import { flagsOf, int, type OptionGroup } from './flag.js';

export interface IdentityLeaseOptions {
  readonly identityLeaseDurationSeconds: number;
  readonly identityLeaseRenewIntervalSeconds: number;
}

const flag = flagsOf<IdentityLeaseOptions>();

const MAX_SECONDS = 2 ** 31 - 1;

export const identityLease: OptionGroup<IdentityLeaseOptions> = {
  title: 'Server identity',
  defaults: {
    identityLeaseDurationSeconds: 3600,
    identityLeaseRenewIntervalSeconds: 10,
  },
  flags: [
    flag({
      name: 'identity-lease-duration-seconds',
      key: 'identityLeaseDurationSeconds',
      arg: 'seconds',
      help: "The duration of this server's identity lease (kube-system/apiserver-<hash>); the leader deletes leases expired for that long",
      parse: (raw) => int(raw, 1, MAX_SECONDS, 'must be a positive number of seconds'),
    }),
    flag({
      name: 'identity-lease-renew-interval-seconds',
      key: 'identityLeaseRenewIntervalSeconds',
      arg: 'seconds',
      help: 'How often this server renews its identity lease',
      parse: (raw) => int(raw, 1, MAX_SECONDS, 'must be a positive number of seconds'),
    }),
  ],
  checks(o) {
    return o.identityLeaseRenewIntervalSeconds >= o.identityLeaseDurationSeconds
      ? ['--identity-lease-renew-interval-seconds must be less than --identity-lease-duration-seconds']
      : [];
  },
};
