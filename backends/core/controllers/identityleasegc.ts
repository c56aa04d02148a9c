// kube-apiserver's identity lease garbage collector, run by the leader:
// deletes the server identity leases (label
// `apiserver.kubernetes.io/identity: kube-apiserver`) whose renewTime plus
// leaseDurationSeconds has passed (a lease without either counts as
// expired, as kube's), and wakes again at the next lease's expiry.
import { leases } from '../../../lib/registry/builtins/coordination.js';
import type { KObject } from '../../../lib/api/meta.js';
import type { CoreEnv } from '../env.js';
import { listPrefix } from '../keys.js';
import type { StoreEvent } from '../store/types.js';
import { deleteStored, WatchingController } from './loop.js';
import { IDENTITY_LABEL, IDENTITY_NAMESPACE, IDENTITY_VALUE } from './identitylease.js';

function isIdentityLease(o: KObject): boolean {
  const labels = o.metadata.labels;
  return labels !== undefined && Object.hasOwn(labels, IDENTITY_LABEL) && labels[IDENTITY_LABEL] === IDENTITY_VALUE;
}

/** When the lease expires (ms); NaN when it lacks a renewTime or duration. */
function expiresAt(o: KObject): number {
  const spec = o['spec'] as Record<string, unknown> | undefined;
  const renew = spec && Object.hasOwn(spec, 'renewTime') ? spec['renewTime'] : undefined;
  const duration = spec && Object.hasOwn(spec, 'leaseDurationSeconds') ? spec['leaseDurationSeconds'] : undefined;
  if (typeof renew !== 'string' || typeof duration !== 'number') return NaN;
  return Date.parse(renew) + duration * 1000;
}

export class IdentityLeaseCollector extends WatchingController {
  /** The next expiry a pass armed its timer for. */
  private nextAt = Infinity;

  constructor(env: CoreEnv, retryMs?: number) {
    super(env, 'apiserver-identity-lease-gc', [listPrefix(leases, IDENTITY_NAMESPACE)], retryMs);
  }

  /** Renewals only push expiries later: a pass is needed only for a lease expiring before the armed time. */
  protected override onEvent(ev: StoreEvent): void {
    if (ev.type === 'DELETED' || !isIdentityLease(ev.object)) return;
    const at = expiresAt(ev.object);
    if (!(at >= this.nextAt)) this.requestPass();
  }

  protected async pass(): Promise<number | undefined> {
    const { items } = await this.env.store.list(listPrefix(leases, IDENTITY_NAMESPACE));
    const now = this.env.clock();
    let next = Infinity;
    for (const lease of items) {
      if (!isIdentityLease(lease)) continue;
      const at = expiresAt(lease);
      if (Number.isNaN(at) || at < now) {
        if (await deleteStored(this.env, leases, lease))
          this.env.log(`identity lease gc: deleted expired lease ${IDENTITY_NAMESPACE}/${lease.metadata.name ?? ''}`);
      } else if (at < next) {
        next = at;
      }
    }
    this.nextAt = next;
    return next === Infinity ? undefined : next + 1;
  }
}
