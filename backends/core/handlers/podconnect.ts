// The requests kube-apiserver hands to a node's kubelet — pods/log, exec,
// attach, portforward and nodes/proxy — answered as kube answers them up to
// the point where it would dial the kubelet: the pod (or node) looked up, the
// container chosen (kube's ValidateContainer and streamLocation messages), a
// pod without a node answered as kube does (an empty log is 204 No Content;
// exec, attach and portforward are 400 "pod <name> does not have a host
// assigned"), a node without an address as kube's connection lookup fails.
// Gatehouse runs no kubelets, so a request that would reach one is 503.
import type { BackendRequest } from '../../../lib/api/backend.js';
import type { KObject } from '../../../lib/api/meta.js';
import { badRequest, cause, invalid, notFound, serviceUnavailable, StatusError, type StatusCause } from '../../../lib/api/status.js';
import { list, str } from '../../../lib/registry/fields.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { objectKey } from '../keys.js';
import { storeCall } from '../storeerrors.js';
import { writeHeadWith } from '../../../lib/http/carried.js';

/** --kubelet-preferred-address-types' default order. */
const PREFERRED_ADDRESS_TYPES = ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'];

async function getPod(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<KObject> {
  const name = r.info.name;
  const pod = await storeCall({ group: '', resource: 'pods' }, name, () => env.store.get(objectKey(t, r.info.namespace, name)));
  if (!pod) throw notFound({ group: '', resource: 'pods' }, name);
  return pod;
}

const names = (pod: KObject, group: string) => list(pod, 'spec', group).map((c) => str(c, 'name'));

function hasContainer(pod: KObject, container: string): boolean {
  return ['initContainers', 'containers', 'ephemeralContainers'].some((g) => names(pod, g).includes(container));
}

/** ValidateContainer (the log's): the one container, or the named one. */
function logContainer(pod: KObject, container: string): void {
  const name = pod.metadata.name ?? '';
  if (container !== '') {
    if (!hasContainer(pod, container)) throw badRequest(`container ${container} is not valid for pod ${name}`);
    return;
  }
  const count = names(pod, 'containers').length;
  if (count === 0) throw badRequest(`a container name must be specified for pod ${name}`);
  if (count > 1) {
    const all = ['initContainers', 'containers', 'ephemeralContainers'].flatMap((g) => names(pod, g));
    throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${all.join(' ')}]`);
  }
}

/** streamLocation's choice of container (exec, attach). */
function streamContainer(pod: KObject, container: string): void {
  const name = pod.metadata.name ?? '';
  if (container !== '') {
    if (!hasContainer(pod, container)) throw badRequest(`container ${container} is not valid for pod ${name}`);
    return;
  }
  const containers = names(pod, 'containers');
  if (containers.length === 0) throw badRequest(`a container name must be specified for pod ${name}`);
  if (containers.length > 1) {
    const init = names(pod, 'initContainers');
    const more = init.length > 0 ? ` or one of the init containers: [${init.join(' ')}]` : '';
    throw badRequest(`a container name must be specified for pod ${name}, choose one of: [${containers.join(' ')}]${more}`);
  }
}

/** ValidatePodLogOptions over the query. */
function checkLogOptions(q: URLSearchParams, name: string): void {
  const causes: StatusCause[] = [];
  const int = (k: string): number | undefined => {
    const v = q.get(k);
    if (v === null || v === '') return undefined;
    if (!/^-?[0-9]+$/.test(v)) throw badRequest(`${k}: strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
    return Number(v);
  };
  const tail = int('tailLines');
  const limit = int('limitBytes');
  const since = int('sinceSeconds');
  if (tail !== undefined && tail < 0) causes.push(cause.invalid('tailLines', tail, 'must be greater than or equal to 0'));
  if (limit !== undefined && limit < 1) causes.push(cause.invalid('limitBytes', limit, 'must be greater than 0'));
  if (since !== undefined && q.get('sinceTime')) causes.push(cause.forbidden('', 'at most one of `sinceTime` or `sinceSeconds` may be specified'));
  if (since !== undefined && since < 1) causes.push(cause.invalid('sinceSeconds', since, 'must be greater than 0'));
  if (causes.length) throw invalid({ group: '', kind: 'PodLogOptions' }, name, causes);
}

/**
 * kube's node connection lookup: the node must exist and have an address of a
 * preferred type; past that kube dials the kubelet, which Gatehouse does not run.
 */
async function kubeletOf(env: CoreEnv, nodeName: string): Promise<never> {
  const nodes = env.registry.lookup('', 'v1', 'nodes');
  const node = nodes && (await storeCall({ group: '', resource: 'nodes' }, nodeName, () => env.store.get(objectKey(nodes, '', nodeName))));
  if (!node) throw notFound({ group: '', resource: 'nodes' }, nodeName);
  const addresses = list(node, 'status', 'addresses');
  if (!addresses.some((a) => PREFERRED_ADDRESS_TYPES.includes(str(a, 'type')))) {
    // A plain Go error in kube: 500 with no reason, %v of the addresses.
    const known = addresses.map((a) => `{${str(a, 'type')} ${str(a, 'address')}}`).join(' ');
    throw new StatusError(500, undefined, `no preferred addresses found; known addresses: [${known}]`);
  }
  throw serviceUnavailable(`no kubelet answers for node "${nodeName}": Gatehouse runs no node agents`);
}

export async function podLog(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  checkLogOptions(r.query, r.info.name);
  const pod = await getPod(env, t, r);
  logContainer(pod, r.query.get('container') ?? '');
  const node = str(pod, 'spec', 'nodeName');
  if (node === '') {
    // LogLocation's empty location: the streamer has nothing to stream.
    writeHeadWith(r, 204, {}).end();
    return;
  }
  return kubeletOf(env, node);
}

/** exec and attach (streamLocation), portforward (no container). */
export async function podStream(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  const pod = await getPod(env, t, r);
  if (r.info.subresource !== 'portforward') streamContainer(pod, r.query.get('container') ?? '');
  const node = str(pod, 'spec', 'nodeName');
  if (node === '') throw badRequest(`pod ${r.info.name} does not have a host assigned`);
  return kubeletOf(env, node);
}

/** nodes/<name>/proxy/… ("<name>:<port>" names a kubelet port). */
export async function nodeProxy(env: CoreEnv, _t: ResourceType, r: BackendRequest): Promise<void> {
  const colon = r.info.name.indexOf(':');
  return kubeletOf(env, colon >= 0 ? r.info.name.slice(0, colon) : r.info.name);
}
