// kube's core/v1 SetDefaults_* for a pod spec, shared by Pods and by every
// kind that carries a pod template (Deployments, ReplicaSets, StatefulSets,
// DaemonSets, ReplicationControllers, PodTemplates, Jobs). Defaults fill only
// what is absent; a field of the wrong type is left for validation to name.
import { isPlainObject } from '../../api/meta.js';

type Obj = Record<string, unknown>;

/** Sets `field` when absent (or the empty string, Go's zero value for the enums defaulted here). */
function fill(o: Obj, field: string, value: unknown): void {
  if (!Object.hasOwn(o, field) || o[field] === undefined || o[field] === null || o[field] === '') o[field] = value;
}

function objects(v: unknown): Obj[] {
  return Array.isArray(v) ? v.filter(isPlainObject) : [];
}

/** parsers.ParseImageName's tag: `latest` when the reference has neither a tag nor a digest. */
export function imageTag(image: string): string {
  const at = image.indexOf('@');
  const name = at >= 0 ? image.slice(0, at) : image;
  const last = name.slice(name.lastIndexOf('/') + 1);
  const colon = last.lastIndexOf(':');
  if (colon >= 0) return last.slice(colon + 1);
  return at >= 0 ? '' : 'latest';
}

function defaultProbe(p: unknown): void {
  if (!isPlainObject(p)) return;
  fill(p, 'timeoutSeconds', 1);
  fill(p, 'periodSeconds', 10);
  fill(p, 'successThreshold', 1);
  fill(p, 'failureThreshold', 3);
  const get = p['httpGet'];
  if (isPlainObject(get)) {
    fill(get, 'path', '/');
    fill(get, 'scheme', 'HTTP');
  }
}

function defaultContainer(c: Obj): void {
  if (typeof c['image'] === 'string') fill(c, 'imagePullPolicy', imageTag(c['image']) === 'latest' ? 'Always' : 'IfNotPresent');
  fill(c, 'terminationMessagePath', '/dev/termination-log');
  fill(c, 'terminationMessagePolicy', 'File');
  for (const port of objects(c['ports'])) fill(port, 'protocol', 'TCP');
  for (const probe of ['livenessProbe', 'readinessProbe', 'startupProbe']) defaultProbe(c[probe]);
  for (const env of objects(c['env'])) {
    const ref = isPlainObject(env['valueFrom']) ? env['valueFrom']['fieldRef'] : undefined;
    if (isPlainObject(ref)) fill(ref, 'apiVersion', 'v1');
  }
}

/** The volume sources whose files get mode 0644 (420) unless told otherwise. */
const MODE_SOURCES = ['secret', 'configMap', 'downwardAPI', 'projected'];

function defaultVolume(v: Obj): void {
  const sources = Object.keys(v).filter((k) => k !== 'name');
  if (sources.length === 0) v['emptyDir'] = {};
  for (const s of MODE_SOURCES) if (isPlainObject(v[s])) fill(v[s], 'defaultMode', 420);
  if (isPlainObject(v['hostPath'])) fill(v['hostPath'], 'type', '');
}

/** SetDefaults_PodSpec, SetDefaults_Container and the nested defaulters of a pod spec. */
export function defaultPodSpec(spec: unknown): void {
  if (!isPlainObject(spec)) return;
  // The v1 conversion: serviceAccount is the deprecated name of serviceAccountName, read when that is empty and written as it.
  const account = typeof spec['serviceAccountName'] === 'string' && spec['serviceAccountName'] !== '' ? spec['serviceAccountName'] : spec['serviceAccount'];
  if (typeof account === 'string' && account !== '') {
    spec['serviceAccountName'] = account;
    spec['serviceAccount'] = account;
  }
  fill(spec, 'dnsPolicy', 'ClusterFirst');
  fill(spec, 'restartPolicy', 'Always');
  if (!isPlainObject(spec['securityContext'])) spec['securityContext'] = {};
  fill(spec, 'terminationGracePeriodSeconds', 30);
  fill(spec, 'schedulerName', 'default-scheduler');
  for (const list of ['initContainers', 'containers', 'ephemeralContainers']) for (const c of objects(spec[list])) defaultContainer(c);
  for (const v of objects(spec['volumes'])) defaultVolume(v);
}

/** A pod template's spec (`template.spec` under the given parent, usually the object's spec). */
export function defaultPodTemplate(parent: unknown): void {
  const template = isPlainObject(parent) ? parent['template'] : undefined;
  if (isPlainObject(template)) defaultPodSpec(template['spec']);
}
