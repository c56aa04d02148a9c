// A pod's compute resources as kube-apiserver 1.33 reads them: the
// containers' requests and limits checked (pkg/apis/core/validation
// ValidateResourceRequirements), requests defaulted from limits
// (SetDefaults_Pod) and the QoS class (pkg/apis/core/helper/qos GetPodQOS).
import { isPlainObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { setOwn } from '../../api/own.js';
import type { Amount } from '../../cel/quantity.js';
import { compareAmounts, QUANTITY_FORMAT, quantityOf } from './quantities.js';
import { list, record } from '../fields.js';

export type QosClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

/** The resources GetPodQOS counts. */
const QOS_RESOURCES = new Set(['cpu', 'memory']);

/** The containers whose resources count (ephemeral containers have none). */
function resourceContainers(spec: unknown): Record<string, unknown>[] {
  return [...list(spec, 'initContainers'), ...list(spec, 'containers')].filter(isPlainObject);
}

function sumAmounts(a: Amount, b: Amount): Amount {
  const e = Math.min(a.e, b.e);
  return { n: a.n * 10n ** BigInt(a.e - e) + b.n * 10n ** BigInt(b.e - e), e };
}

const ZERO: Amount = { n: 0n, e: 0 };

/** SetDefaults_Pod: a limit without a request is also the request. */
export function defaultRequestsFromLimits(spec: unknown): void {
  for (const c of resourceContainers(spec)) {
    const resources = c['resources'];
    if (!isPlainObject(resources) || !isPlainObject(resources['limits'])) continue;
    const limits = resources['limits'];
    if (Object.keys(limits).length === 0) continue;
    const requests = isPlainObject(resources['requests']) ? resources['requests'] : (resources['requests'] = {});
    for (const [k, v] of Object.entries(limits)) if (!Object.hasOwn(requests, k)) setOwn(requests, k, v);
  }
}

/** GetPodQOS over the containers and init containers (pod-level resources are alpha in 1.33, off). */
export function podQosClass(spec: unknown): QosClass {
  const requests = new Map<string, Amount>();
  const limits = new Map<string, Amount>();
  const add = (m: Map<string, Amount>, k: string, a: Amount) => {
    const had = m.get(k);
    m.set(k, had ? sumAmounts(had, a) : a);
  };
  let guaranteed = true;
  for (const c of resourceContainers(spec)) {
    for (const [k, v] of Object.entries(record(c, 'resources', 'requests'))) {
      const a = quantityOf(v);
      if (QOS_RESOURCES.has(k) && a && compareAmounts(a, ZERO) > 0) add(requests, k, a);
    }
    const found = new Set<string>();
    for (const [k, v] of Object.entries(record(c, 'resources', 'limits'))) {
      const a = quantityOf(v);
      if (QOS_RESOURCES.has(k) && a && compareAmounts(a, ZERO) > 0) {
        found.add(k);
        add(limits, k, a);
      }
    }
    if (found.size !== QOS_RESOURCES.size) guaranteed = false;
  }
  if (requests.size === 0 && limits.size === 0) return 'BestEffort';
  if (guaranteed && requests.size === limits.size) {
    for (const [k, r] of requests) {
      const l = limits.get(k);
      if (!l || compareAmounts(r, l) !== 0) return 'Burstable';
    }
    return 'Guaranteed';
  }
  return 'Burstable';
}

/**
 * ValidateResourceRequirements for each container at `path` (`spec`,
 * `spec.template.spec`): every quantity parses and is not negative, and no
 * request exceeds its limit. Fields are named as kube names them
 * (`spec.containers[0].resources.limits[cpu]`).
 */
export function validateContainerResources(spec: unknown, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const group of ['initContainers', 'containers'] as const) {
    for (const [i, c] of list(spec, group).entries()) {
      const at = `${path}.${group}[${i}].resources`;
      const limits = quantities(record(c, 'resources', 'limits'), `${at}.limits`, causes);
      const requests = quantities(record(c, 'resources', 'requests'), `${at}.requests`, causes);
      for (const [k, r] of requests) {
        const l = limits.get(k);
        if (l && compareAmounts(r.amount, l.amount) > 0) {
          causes.push(cause.invalid(`${at}.requests[${k}]`, r.text, `must be less than or equal to ${k} limit of ${l.text}`));
        }
      }
    }
  }
  return causes;
}

/** The parsed quantities of one map; a value that does not parse, or is negative, is a cause. */
function quantities(m: Readonly<Record<string, unknown>>, field: string, causes: StatusCause[]): Map<string, { amount: Amount; text: string }> {
  const out = new Map<string, { amount: Amount; text: string }>();
  for (const [k, v] of Object.entries(m)) {
    const amount = quantityOf(v);
    if (!amount) {
      causes.push(cause.invalid(`${field}[${k}]`, v, QUANTITY_FORMAT));
      continue;
    }
    if (amount.n < 0n) {
      causes.push(cause.invalid(`${field}[${k}]`, String(v), 'must be greater than or equal to 0'));
      continue;
    }
    out.set(k, { amount, text: String(v) });
  }
  return out;
}
