// RBAC: the policy kept in memory from the store, and the authorizer over it.
import type { ObjectSource } from '../../../lib/api/objectsource.js';
import { RbacAuthorizer } from './authorizer.js';
import { RbacPolicy } from './policy.js';
import { RbacSync } from './sync.js';

export { RbacAuthorizer, type ResolvedRules } from './authorizer.js';
export { RbacPolicy } from './policy.js';

export interface RunningRbac {
  readonly authorizer: RbacAuthorizer;
  readonly policy: RbacPolicy;
  stop(): void;
}

/** Lists the RBAC objects once (resolves then) and keeps them current by watching. */
export async function startRbac(source: ObjectSource, log: (msg: string) => void): Promise<RunningRbac> {
  const policy = new RbacPolicy();
  const sync = new RbacSync(source, policy, { log });
  await sync.start();
  return { authorizer: new RbacAuthorizer(policy), policy, stop: () => sync.stop() };
}
