// kube-apiserver's `scheduling/bootstrap-system-priority-classes` hook: the
// two system PriorityClasses exist once the server is ready. An existing class
// of that name is left as it is (kube only creates what is missing).
import { SYSTEM_PRIORITY_CLASSES } from '../../../lib/registry/builtins/scheduling.js';
import type { CoreEnv } from '../env.js';
import { objectKey } from '../keys.js';
import { getOrCreate } from './loop.js';

export async function ensureSystemPriorityClasses(env: CoreEnv): Promise<void> {
  const t = env.registry.lookup('scheduling.k8s.io', 'v1', 'priorityclasses');
  // Off with --runtime-config=scheduling.k8s.io/v1=false: nothing to create.
  if (!t) return;
  for (const pc of SYSTEM_PRIORITY_CLASSES) {
    const obj = structuredClone(pc);
    t.defaults?.(obj);
    await getOrCreate(env, t, objectKey(t, '', pc.metadata.name!), obj);
  }
}
