// kube's core/v1 SetDefaults_Service: what a Service gets without asking
// (session affinity, type, each port's protocol and target port, the traffic
// policies, load-balancer node ports). Defaults fill only what is absent; a
// field of the wrong type is left for validation to name. Allocation (cluster
// IPs, node ports) is the Service REST storage's, not defaulting's.
import { isPlainObject } from '../../api/meta.js';

type Obj = Record<string, unknown>;

const absent = (o: Obj, field: string) => !Object.hasOwn(o, field) || o[field] === undefined || o[field] === null;

/** Sets `field` when absent or the empty string (Go's zero for these enums). */
function fill(o: Obj, field: string, value: unknown): void {
  if (absent(o, field) || o[field] === '') o[field] = value;
}

/** kube's DefaultClientIPServiceAffinitySeconds: three hours. */
const CLIENT_IP_AFFINITY_SECONDS = 10_800;

export function defaultService(spec: unknown): void {
  if (!isPlainObject(spec)) return;
  fill(spec, 'sessionAffinity', 'None');
  if (spec['sessionAffinity'] === 'None') delete spec['sessionAffinityConfig'];
  if (spec['sessionAffinity'] === 'ClientIP') {
    const config = spec['sessionAffinityConfig'];
    const clientIP = isPlainObject(config) ? config['clientIP'] : undefined;
    if (!isPlainObject(clientIP) || absent(clientIP, 'timeoutSeconds'))
      spec['sessionAffinityConfig'] = { clientIP: { timeoutSeconds: CLIENT_IP_AFFINITY_SECONDS } };
  }
  fill(spec, 'type', 'ClusterIP');
  if (Array.isArray(spec['ports']))
    for (const port of spec['ports']) {
      if (!isPlainObject(port)) continue;
      fill(port, 'protocol', 'TCP');
      // An IntOrString of 0 or "" is Go's zero: the target is the service port itself.
      const target = port['targetPort'];
      if (absent(port, 'targetPort') || target === 0 || target === '') port['targetPort'] = port['port'];
    }
  const type = spec['type'];
  // Only the types with node ports: a ClusterIP service with externalIPs gets none (as a kind cluster's answer shows).
  if (type === 'LoadBalancer' || type === 'NodePort') fill(spec, 'externalTrafficPolicy', 'Cluster');
  if (absent(spec, 'internalTrafficPolicy') && (type === 'ClusterIP' || type === 'NodePort' || type === 'LoadBalancer'))
    spec['internalTrafficPolicy'] = 'Cluster';
  if (type === 'LoadBalancer' && absent(spec, 'allocateLoadBalancerNodePorts')) spec['allocateLoadBalancerNodePorts'] = true;
}
