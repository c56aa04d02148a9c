// kube-controller-manager's validatingadmissionpolicy-status controller:
// each ValidatingAdmissionPolicy whose generation the status has not
// observed gets status.typeChecking (the warnings of its expressions against
// the schemas of the kinds it matches) and status.observedGeneration,
// written by server-side apply on the status subresource under kube's field
// manager. Every process sharing a store may run it: they compute the same
// status, and a generation already observed is never written again.
import type { KObject } from '../../../lib/api/meta.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import { typeCheckPolicy } from '../admission/policies/typecheck.js';
import type { CoreEnv } from '../env.js';
import { objectKey, typePrefix } from '../keys.js';
import { guaranteedUpdate } from '../store/types.js';
import { applyStatus } from './applystatus.js';
import { WatchingController } from './loop.js';

/** kube's controller name, its field manager. */
export const POLICY_STATUS_FIELD_MANAGER = 'validatingadmissionpolicy-status-controller';

const observed = (p: KObject): unknown => (p['status'] as { observedGeneration?: unknown } | undefined)?.observedGeneration;

export class PolicyStatusController extends WatchingController {
  private readonly policies: ResourceType | undefined;

  constructor(env: CoreEnv, retryMs?: number) {
    const t = env.registry.lookup('admissionregistration.k8s.io', 'v1', 'validatingadmissionpolicies');
    super(env, 'validatingadmissionpolicy-status', t ? [typePrefix(t)] : [], retryMs);
    this.policies = t;
  }

  protected async pass(): Promise<undefined> {
    const t = this.policies;
    if (!t) return undefined;
    const { items } = await this.env.store.list(typePrefix(t));
    for (const p of items) {
      if (observed(p) === p.metadata.generation) continue;
      await this.write(t, p.metadata.name ?? '');
    }
    return undefined;
  }

  private async write(t: ResourceType, name: string): Promise<void> {
    // A policy deleted meanwhile is not written (guaranteedUpdate finds nothing).
    await guaranteedUpdate(this.env.store, objectKey(t, '', name), (cur) => {
      if (observed(cur) === cur.metadata.generation) return null;
      const warnings = typeCheckPolicy(cur, this.env.registry);
      const now = this.env.clock();
      const status = { observedGeneration: cur.metadata.generation, typeChecking: warnings.length ? { expressionWarnings: warnings } : {} };
      return applyStatus(t, cur, status, POLICY_STATUS_FIELD_MANAGER, now) ?? null;
    });
  }
}
