// Autoregister (kube-aggregator's autoregister controller, `onstart` mode):
// at every start, one local APIService (no spec.service) per group version
// the front door serves in-process, with kube's priorities. Missing ones are
// created, drifted ones are put back, and automanaged ones for group versions
// no longer served are deleted. Remote APIServices are never touched.
import { rfc3339, type KObject } from '../../../lib/api/meta.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { listPrefix, objectKey } from '../keys.js';
import { prepareCreate, prepareUpdate } from '../objects.js';
import { retryOnConflict, RETRY, StoreError } from '../store/types.js';

export const AUTOMANAGED_LABEL = 'kube-aggregator.kubernetes.io/automanaged';

/** One group version served locally, with its discovery priorities. */
export interface LocalGroupVersion {
  readonly group: string;
  readonly version: string;
  readonly groupPriorityMinimum: number;
  readonly versionPriority: number;
}

function apiServiceType(env: CoreEnv): ResourceType {
  const t = env.registry.lookup('apiregistration.k8s.io', 'v1', 'apiservices');
  if (!t) throw new Error('the registry has no apiregistration.k8s.io/v1 apiservices type');
  return t;
}

export function localApiServiceName(gv: Pick<LocalGroupVersion, 'group' | 'version'>): string {
  return `${gv.version}.${gv.group}`;
}

function desired(gv: LocalGroupVersion): KObject {
  return {
    apiVersion: 'apiregistration.k8s.io/v1',
    kind: 'APIService',
    metadata: { name: localApiServiceName(gv), labels: { [AUTOMANAGED_LABEL]: 'onstart' } },
    spec: { group: gv.group, version: gv.version, groupPriorityMinimum: gv.groupPriorityMinimum, versionPriority: gv.versionPriority },
  };
}

const LOCAL_STATUS = { conditions: [{ type: 'Available', status: 'True', reason: 'Local', message: 'Local APIServices are always available' }] };

const AUTOREGISTER_ATTEMPTS = 8;

export async function autoregister(env: CoreEnv, local: readonly LocalGroupVersion[]): Promise<void> {
  const t = apiServiceType(env);
  const wanted = new Map(local.map((gv) => [localApiServiceName(gv), desired(gv)]));
  for (const [name, obj] of wanted) {
    const key = objectKey(t, '', name);
    // An APIService that keeps changing under these writes is left as it is until the next start.
    await retryOnConflict<void>(
      async () => {
        const current = await env.store.get(key);
        try {
          if (!current) {
            const created = await env.store.create(key, prepareCreate(t, structuredClone(obj), env.clock()));
            await setLocalStatus(env, t, key, created);
          } else {
            const spec = { ...(current['spec'] as Record<string, unknown> | undefined) };
            const want = obj['spec'] as Record<string, unknown>;
            const drifted =
              spec['service'] !== undefined || Object.keys(want).some((k) => spec[k] !== want[k]) || current.metadata.labels?.[AUTOMANAGED_LABEL] !== 'onstart';
            let now = current;
            if (drifted) {
              const next = prepareUpdate(
                t,
                { ...current, metadata: { ...current.metadata, labels: { ...current.metadata.labels, [AUTOMANAGED_LABEL]: 'onstart' } }, spec: want },
                current,
                'main',
              );
              if (next) now = await env.store.update(key, next, Number(current.metadata.resourceVersion));
            }
            await setLocalStatus(env, t, key, now);
          }
        } catch (err) {
          if (err instanceof StoreError && (err.code === 'conflict' || err.code === 'exists')) return RETRY;
          throw err;
        }
      },
      { giveUp: undefined },
      AUTOREGISTER_ATTEMPTS,
    );
  }
  // Automanaged APIServices of group versions that are no longer served locally go.
  const all = await env.store.list(listPrefix(t, ''));
  for (const o of all.items) {
    const name = o.metadata.name ?? '';
    // Only the `onstart` ones: `true` ones belong to the CRD controller (controllers/crd.ts).
    if (wanted.has(name) || o.metadata.labels?.[AUTOMANAGED_LABEL] !== 'onstart') continue;
    if ((o['spec'] as Record<string, unknown> | undefined)?.['service']) continue;
    try {
      await env.store.delete(objectKey(t, '', name), Number(o.metadata.resourceVersion));
    } catch (err) {
      if (!(err instanceof StoreError && (err.code === 'not-found' || err.code === 'conflict'))) throw err;
    }
  }
}

async function setLocalStatus(env: CoreEnv, t: ResourceType, key: string, current: KObject): Promise<void> {
  const conds = (current['status'] as { conditions?: Array<Record<string, unknown>> } | undefined)?.conditions ?? [];
  const avail = conds.find((c) => c['type'] === 'Available');
  if (avail && avail['status'] === 'True' && avail['reason'] === 'Local') return;
  const status = { conditions: [{ ...LOCAL_STATUS.conditions[0], lastTransitionTime: rfc3339(env.clock()) }] };
  const next = prepareUpdate(t, { ...current, status }, current, 'status');
  if (next) await env.store.update(key, next, Number(current.metadata.resourceVersion));
}
