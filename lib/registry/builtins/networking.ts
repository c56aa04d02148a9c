// networking.k8s.io/v1: Ingresses, IngressClasses and NetworkPolicies, stored
// and served as kube-apiserver 1.33 does (pkg/registry/networking/*,
// pkg/apis/networking/v1 defaults, pkg/printers). No ingress controller or
// network plugin acts on them.
import { isPlainObject, type KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import type { ResourceType } from '../types.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { at, list, str } from '../fields.js';
import { networkingV1 } from '../../schema/gen/networking-v1.js';
import { builtinType, statusOf } from './group-type.js';
import { formatLabelSelector } from './selector-text.js';

const doc = (type: string, field: string): string => networkingV1.types[type]?.f[field]?.[1] ?? '';
const networking = (kind: string, plural: string, rest: Partial<ResourceType> & Pick<ResourceType, 'namespaced'>) =>
  builtinType('networking.k8s.io', kind, plural, { generation: 'spec', ...rest });

/** formatHosts: the first three rule hosts, `*` when none. */
function hosts(o: KObject): string {
  const rules = list(o, 'spec', 'rules');
  const shown: string[] = [];
  let more = false;
  for (const r of rules) {
    if (shown.length === 3) more = true;
    if (!more && str(r, 'host') !== '') shown.push(str(r, 'host'));
  }
  if (shown.length === 0) return '*';
  return more ? `${shown.join(',')} + ${rules.length - 3} more...` : shown.join(',');
}

/** The load balancer's IPs (else hostnames), sorted and de-duplicated. */
function address(o: KObject): string {
  const out = new Set<string>();
  for (const i of list(o, 'status', 'loadBalancer', 'ingress')) {
    const v = str(i, 'ip') || str(i, 'hostname');
    if (v) out.add(v);
  }
  return [...out].sort().join(',');
}

/** validateIngress as people meet it: every HTTP path has a pathType and a backend. */
function validateIngress(obj: KObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const backendCauses = (b: unknown, path: string) => {
    if (!isPlainObject(b)) return [cause.required(path)];
    const svc = b['service'];
    if (isPlainObject(svc) && isPlainObject(svc['port']) && svc['port']['name'] === undefined && svc['port']['number'] === undefined) {
      return [cause.required(`${path}.service.port`, 'port name or number is required')];
    }
    return svc === undefined && b['resource'] === undefined ? [cause.invalid(path, '', 'resource or service backend is required')] : [];
  };
  const fallback = at(obj, 'spec', 'defaultBackend');
  if (fallback !== undefined) causes.push(...backendCauses(fallback, 'spec.defaultBackend'));
  for (const [i, rule] of list(obj, 'spec', 'rules').entries()) {
    for (const [j, p] of list(rule, 'http', 'paths').entries()) {
      const at_ = `spec.rules[${i}].http.paths[${j}]`;
      const type = str(p, 'pathType');
      if (type === '') causes.push(cause.required(`${at_}.pathType`, 'pathType must be specified'));
      else if (!['Exact', 'Prefix', 'ImplementationSpecific'].includes(type))
        causes.push(cause.notSupported(`${at_}.pathType`, type, ['Exact', 'ImplementationSpecific', 'Prefix']));
      else if (type !== 'ImplementationSpecific' && !str(p, 'path').startsWith('/'))
        causes.push(cause.invalid(`${at_}.path`, str(p, 'path'), 'must be an absolute path'));
      causes.push(...backendCauses(at(p, 'backend'), `${at_}.backend`));
    }
  }
  return causes;
}

export const ingresses = networking('Ingress', 'ingresses', {
  namespaced: true,
  shortNames: ['ing'],
  subresources: [statusOf('Ingress')],
  columns: [
    nameColumn(),
    column('Class', 'The name of the IngressClass resource that should be used for this Ingress', (o) => str(o, 'spec', 'ingressClassName') || '<none>'),
    column('Hosts', 'Hosts that incoming requests are matched against before the ingress rule', hosts),
    column('Address', 'Address is a list containing ingress points for the load-balancer', address),
    column('Ports', 'Ports of TLS configurations that open', (o) => (list(o, 'spec', 'tls').length ? '80, 443' : '80')),
    ageColumn(),
  ],
  validate: validateIngress,
});

export const ingressclasses = networking('IngressClass', 'ingressclasses', {
  namespaced: false,
  columns: [
    nameColumn(),
    column('Controller', 'Controller that is responsible for handling this class', (o) => str(o, 'spec', 'controller')),
    column('Parameters', 'A reference to a resource with additional parameters', (o) => {
      const p = at(o, 'spec', 'parameters');
      if (!isPlainObject(p)) return '<none>';
      const group = str(p, 'apiGroup');
      return `${str(p, 'kind')}${group ? `.${group}` : ''}/${str(p, 'name')}`;
    }),
    ageColumn(),
  ],
  validate(obj, old) {
    const controller = str(obj, 'spec', 'controller');
    if (controller === '') return [cause.required('spec.controller')];
    if (old && controller !== str(old, 'spec', 'controller')) return [cause.invalid('spec.controller', controller, 'field is immutable')];
    return [];
  },
});

export const networkpolicies = networking('NetworkPolicy', 'networkpolicies', {
  namespaced: true,
  shortNames: ['netpol'],
  columns: [
    nameColumn(),
    column('Pod-Selector', doc('NetworkPolicySpec', 'podSelector'), (o) => formatLabelSelector(at(o, 'spec', 'podSelector') ?? {})),
    ageColumn(),
  ],
  // SetDefaults_NetworkPolicy and SetDefaults_NetworkPolicyPort.
  defaults(obj) {
    const spec = obj['spec'];
    if (!isPlainObject(spec)) return;
    for (const dir of ['ingress', 'egress']) {
      for (const rule of list(spec, dir))
        for (const port of list(rule, 'ports')) if (isPlainObject(port) && port['protocol'] === undefined) port['protocol'] = 'TCP';
    }
    if (list(spec, 'policyTypes').length === 0) spec['policyTypes'] = list(spec, 'egress').length > 0 ? ['Ingress', 'Egress'] : ['Ingress'];
  },
  validate(obj) {
    return isPlainObject(at(obj, 'spec', 'podSelector')) ? [] : [cause.required('spec.podSelector')];
  },
});

export const NETWORKING_TYPES: readonly ResourceType[] = [ingresses, ingressclasses, networkpolicies];
