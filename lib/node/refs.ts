// What a pod or a persistent volume points at, read from untrusted stored
// JSON the way kube's podutil.VisitPod*Names and pvutil.VisitPVSecretNames
// walk the typed objects: every field that makes the kubelet fetch a secret,
// config map, claim or service account for the pod.
import { isPlainObject, type KObject } from '../api/meta.js';

export interface PodRefs {
  readonly secrets: readonly string[];
  readonly configmaps: readonly string[];
  readonly pvcs: readonly string[];
  readonly serviceAccount: string;
}

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {});
const arr = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isPlainObject) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Volume sources that carry a `secretRef: {name}` for the kubelet. */
const SECRET_REF_VOLUMES = ['cephfs', 'cinder', 'flexVolume', 'rbd', 'scaleIO', 'iscsi', 'storageos'] as const;

export function podRefs(pod: KObject): PodRefs {
  const spec = obj(pod['spec']);
  const secrets = new Set<string>();
  const configmaps = new Set<string>();
  const pvcs = new Set<string>();
  const add = (set: Set<string>, name: string) => {
    if (name !== '') set.add(name);
  };

  for (const s of arr(spec['imagePullSecrets'])) add(secrets, str(s['name']));
  const containers = [...arr(spec['initContainers']), ...arr(spec['containers']), ...arr(spec['ephemeralContainers'])];
  for (const c of containers) {
    for (const e of arr(c['envFrom'])) {
      add(secrets, str(obj(e['secretRef'])['name']));
      add(configmaps, str(obj(e['configMapRef'])['name']));
    }
    for (const e of arr(c['env'])) {
      const from = obj(e['valueFrom']);
      add(secrets, str(obj(from['secretKeyRef'])['name']));
      add(configmaps, str(obj(from['configMapKeyRef'])['name']));
    }
  }
  const podName = str(obj(pod.metadata)['name']);
  for (const v of arr(spec['volumes'])) {
    add(secrets, str(obj(v['secret'])['secretName']));
    add(secrets, str(obj(v['azureFile'])['secretName']));
    for (const k of SECRET_REF_VOLUMES) add(secrets, str(obj(obj(v[k])['secretRef'])['name']));
    add(secrets, str(obj(obj(v['csi'])['nodePublishSecretRef'])['name']));
    add(configmaps, str(obj(v['configMap'])['name']));
    for (const src of arr(obj(v['projected'])['sources'])) {
      add(secrets, str(obj(src['secret'])['name']));
      add(configmaps, str(obj(src['configMap'])['name']));
    }
    add(pvcs, str(obj(v['persistentVolumeClaim'])['claimName']));
    // A generic ephemeral volume's claim is named <pod>-<volume>.
    if (isPlainObject(v['ephemeral']) && podName !== '') add(pvcs, `${podName}-${str(v['name'])}`);
  }
  // Without a ServiceAccount admission step a pod may omit the name; the kubelet then uses "default".
  const serviceAccount = str(spec['serviceAccountName']) || str(spec['serviceAccount']) || 'default';
  return { secrets: [...secrets], configmaps: [...configmaps], pvcs: [...pvcs], serviceAccount };
}

export interface PvRefs {
  /** `namespace/name` of the bound claim, or '' when unbound. */
  readonly claim: string;
  /** `namespace/name` of secrets the kubelet reads for this volume. */
  readonly secrets: readonly string[];
}

export function pvRefs(pv: KObject): PvRefs {
  const spec = obj(pv['spec']);
  const ref = obj(spec['claimRef']);
  const claimNs = str(ref['namespace']);
  const claimName = str(ref['name']);
  if (claimNs === '' || claimName === '') return { claim: '', secrets: [] };
  const secrets = new Set<string>();
  const add = (ns: string, name: string) => {
    if (name !== '') secrets.add(`${ns || claimNs}/${name}`);
  };
  const az = obj(spec['azureFile']);
  add(str(az['secretNamespace']), str(az['secretName']));
  for (const k of SECRET_REF_VOLUMES) {
    const r = obj(obj(spec[k])['secretRef']);
    add(str(r['namespace']), str(r['name']));
  }
  const csi = obj(spec['csi']);
  for (const k of ['nodePublishSecretRef', 'nodeStageSecretRef', 'nodeExpandSecretRef']) {
    const r = obj(csi[k]);
    add(str(r['namespace']), str(r['name']));
  }
  return { claim: `${claimNs}/${claimName}`, secrets: [...secrets] };
}
