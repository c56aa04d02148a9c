// ServiceAccount, kube-apiserver's default-on mutating plugin
// (plugin/pkg/admission/serviceaccount): a pod created without a service
// account gets `default`; the account must exist (looked up from the cache,
// then live, the `default` one up to ten times while its controller makes
// it); unless the pod or the account turns automounting off, every container
// and init container mounts a projected `kube-api-access-xxxxx` volume (a
// bound token, the cluster CA, the namespace) at the service account path; a
// pod without image pull secrets takes the account's. Mirror pods are left
// as they are. A pod in a namespace that does not exist is left for
// NamespaceLifecycle to refuse, as kube's chain answers it (404 on the
// namespace, before this plugin's lookup).
import { forbidden } from '../../../lib/api/status.js';
import { isPlainObject, type KObject } from '../../../lib/api/meta.js';
import { list, str } from '../../../lib/registry/fields.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { objectKey } from '../keys.js';
import { generateName } from '../objects.js';
import { storeCall } from '../storeerrors.js';
import { getCachedFirst } from '../store/types.js';
import type { AdmissionAttributes, MutatingPlugin } from './types.js';

type Obj = Record<string, unknown>;

const MOUNT_PATH = '/var/run/secrets/kubernetes.io/serviceaccount';
const VOLUME_PREFIX = 'kube-api-access-';
const MIRROR_POD = 'kubernetes.io/config.mirror';
/** getServiceAccount: live lookups of the `default` account while its controller may still be making it. */
const DEFAULT_ATTEMPTS = 10;

/** TokenVolumeSource, with kube's field order and its 3607-second token. */
function tokenVolume(name: string): Obj {
  return {
    name,
    projected: {
      sources: [
        { serviceAccountToken: { expirationSeconds: 3607, path: 'token' } },
        { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
        { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
      ],
      defaultMode: 420,
    },
  };
}

export const serviceAccountAdmission: MutatingPlugin = {
  name: 'ServiceAccount',
  admit(a, env) {
    const r = a.resource;
    if (a.operation !== 'CREATE' || r.group !== '' || r.resource !== 'pods' || a.subresource !== '' || !a.object) return undefined;
    if (Object.hasOwn(a.object.metadata.annotations ?? {}, MIRROR_POD)) return undefined;
    const saType = env.registry.lookup('', 'v1', 'serviceaccounts');
    if (!saType) return undefined;
    return admitPod(a, a.object, env, saType);
  },
};

async function admitPod(a: AdmissionAttributes, pod: KObject, env: CoreEnv, saType: ResourceType): Promise<KObject | undefined> {
  const spec: Obj = isPlainObject(pod['spec']) ? { ...pod['spec'] } : {};
  const name = str(spec, 'serviceAccountName') || str(spec, 'serviceAccount') || 'default';
  spec['serviceAccountName'] = name;
  const sa = await lookup(env, saType, a.namespace, name);
  if (sa === 'no-namespace') return undefined;
  if (!sa) {
    const podName = pod.metadata.name || pod.metadata.generateName || 'Unknown';
    throw forbidden(
      { group: '', resource: 'pods' },
      podName,
      `error looking up service account ${a.namespace}/${name}: serviceaccount ${JSON.stringify(name)} not found`,
    );
  }
  const podChoice = spec['automountServiceAccountToken'];
  const saChoice = sa['automountServiceAccountToken'];
  const automount = typeof podChoice === 'boolean' ? podChoice : typeof saChoice === 'boolean' ? saChoice : true;
  if (automount) mountToken(spec);
  if (list(spec, 'imagePullSecrets').length === 0 && list(sa, 'imagePullSecrets').length > 0) {
    spec['imagePullSecrets'] = list(sa, 'imagePullSecrets').map((s) => ({ name: str(s, 'name') }));
  }
  return { ...pod, spec };
}

/** The account, undefined when it does not exist, 'no-namespace' when its namespace does not either. */
async function lookup(env: CoreEnv, saType: ResourceType, namespace: string, name: string): Promise<KObject | undefined | 'no-namespace'> {
  const key = objectKey(saType, namespace, name);
  const get = () => storeCall({ group: '', resource: 'serviceaccounts' }, name, () => getCachedFirst(env.store, key));
  let sa = await get();
  if (sa) return sa;
  const nsType = env.registry.lookup('', 'v1', 'namespaces');
  if (nsType && !(await storeCall({ group: '', resource: 'namespaces' }, namespace, () => getCachedFirst(env.store, objectKey(nsType, '', namespace))))) {
    return 'no-namespace';
  }
  const attempts = name === 'default' ? DEFAULT_ATTEMPTS : 1;
  // kube's retry interval: one random wait of 100 to 200 ms, used between every try.
  const interval = 100 + Math.floor(Math.random() * 100);
  for (let i = 1; i < attempts && !sa; i++) {
    await new Promise((resolve) => setTimeout(resolve, interval));
    sa = await storeCall({ group: '', resource: 'serviceaccounts' }, name, () => env.store.get(key));
  }
  return sa;
}

/** mountServiceAccountToken: the volume found or named, a mount in every container not mounting the path already. */
function mountToken(spec: Obj): void {
  const volumes = list(spec, 'volumes');
  const existing = volumes.find((v) => str(v, 'name').startsWith(VOLUME_PREFIX));
  const volumeName = existing ? str(existing, 'name') : generateName(VOLUME_PREFIX);
  const mount = { name: volumeName, readOnly: true, mountPath: MOUNT_PATH };
  let needed = false;
  for (const group of ['initContainers', 'containers']) {
    if (!Array.isArray(spec[group])) continue;
    spec[group] = (spec[group] as unknown[]).map((c) => {
      if (!isPlainObject(c)) return c;
      const mounts = list(c, 'volumeMounts');
      if (mounts.some((m) => str(m, 'mountPath') === MOUNT_PATH)) return c;
      needed = true;
      return { ...c, volumeMounts: [...mounts, mount] };
    });
  }
  if (!existing && needed) spec['volumes'] = [...volumes, tokenVolume(volumeName)];
}
