// POST …/pods/<name>/binding (core/v1 Binding), as kube's BindingREST: the
// target checked (ValidatePodBinding), then spec.nodeName set once with the
// Binding's annotations merged and PodScheduled True, written straight to
// storage as kube's GuaranteedUpdate does (no strategy: the generation stays).
// A pod already bound, being deleted or still gated is 409 on pods/binding.
import type { BackendRequest } from '../../../lib/api/backend.js';
import type { KObject } from '../../../lib/api/meta.js';
import { cause, conflict, invalid, notFound, STALE_OBJECT, type StatusCause } from '../../../lib/api/status.js';
import { setOwn } from '../../../lib/api/own.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import { withPodCondition } from '../../../lib/registry/builtins/pod-status.js';
import type { CoreEnv } from '../env.js';
import { objectKey } from '../keys.js';
import { fromStoreError, storeCall } from '../storeerrors.js';
import { retryOnConflict, RETRY, StoreError } from '../store/types.js';
import { parseDryRun } from './params.js';
import { objectField, readAdmitted, sendCreatedStatus, validateAdmitted, type RequestKind } from './subcreate.js';

const BINDING: RequestKind = { group: '', version: 'v1', kind: 'Binding', accepts: ['v1'] };
const PODS = { group: '', resource: 'pods' };
const BINDINGS = { group: '', resource: 'pods/binding' };

function validateBinding(binding: KObject): StatusCause[] {
  const target = objectField(binding, 'target');
  const causes: StatusCause[] = [];
  const kind = typeof target['kind'] === 'string' ? target['kind'] : '';
  if (kind !== '' && kind !== 'Node') causes.push(cause.notSupported('target.kind', kind, ['Node', '<empty>']));
  if (typeof target['name'] !== 'string' || target['name'] === '') causes.push(cause.required('target.name'));
  return causes;
}

export async function bindPod(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  const dryRun = parseDryRun(r.query, 'CreateOptions');
  const binding = await readAdmitted(env, t, r, BINDING, dryRun);
  const name = r.info.name;
  const causes = validateBinding(binding);
  if (causes.length) throw invalid({ group: '', kind: 'Binding' }, name, causes);
  await validateAdmitted(env, t, r, BINDING, binding, dryRun);
  const node = objectField(binding, 'target')['name'] as string;
  const annotations = objectField(binding.metadata, 'annotations');
  const key = objectKey(t, r.info.namespace, name);
  await retryOnConflict(
    async () => {
      const pod = await storeCall(PODS, name, () => env.store.get(key));
      if (!pod) throw notFound(PODS, name);
      if (pod.metadata.deletionTimestamp) throw conflict(BINDINGS, name, `pod ${name} is being deleted, cannot be assigned to a host`);
      const spec = objectField(pod, 'spec');
      const bound = typeof spec['nodeName'] === 'string' ? spec['nodeName'] : '';
      if (bound !== '') throw conflict(BINDINGS, name, `pod ${name} is already assigned to node ${JSON.stringify(bound)}`);
      // A pod not ready for scheduling is not bound either.
      if (Array.isArray(spec['schedulingGates']) && spec['schedulingGates'].length > 0) {
        throw conflict(BINDINGS, name, `pod ${name} has non-empty .spec.schedulingGates`);
      }
      const merged: Record<string, string> = { ...(pod.metadata.annotations ?? {}) };
      for (const [k, v] of Object.entries(annotations)) if (typeof v === 'string') setOwn(merged, k, v);
      const next: KObject = {
        ...pod,
        metadata: { ...pod.metadata, annotations: merged },
        spec: { ...spec, nodeName: node },
        status: withPodCondition(pod['status'], 'PodScheduled', 'True', env.clock()),
      };
      if (Object.keys(merged).length === 0) delete next.metadata.annotations;
      if (dryRun) return;
      try {
        await env.store.update(key, next, Number(pod.metadata.resourceVersion));
      } catch (err) {
        if (err instanceof StoreError && err.code === 'conflict') return RETRY;
        throw fromStoreError(err, PODS, name);
      }
    },
    () => conflict(PODS, name, STALE_OBJECT),
  );
  sendCreatedStatus(env, r);
}
