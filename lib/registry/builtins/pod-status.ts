// What kube-apiserver itself writes into a pod's status: the status of a new
// pod (pod strategy PrepareForCreate) and a condition set as podutil's
// UpdatePodCondition sets it (the binding subresource's PodScheduled).
import { isPlainObject, rfc3339 } from '../../api/meta.js';
import { setOwn } from '../../api/own.js';
import { list } from '../fields.js';
import { podQosClass } from './pod-resources.js';

type Obj = Record<string, unknown>;

/** PrepareForCreate: Pending, the QoS class, and PodScheduled False while scheduling gates remain. */
export function podStatusOnCreate(spec: unknown): Obj {
  const status: Obj = { phase: 'Pending' };
  if (list(spec, 'schedulingGates').length > 0) {
    status['conditions'] = [
      {
        type: 'PodScheduled',
        status: 'False',
        lastProbeTime: null,
        lastTransitionTime: null,
        reason: 'SchedulingGated',
        message: 'Scheduling is blocked due to non-empty scheduling gates',
      },
    ];
  }
  status['qosClass'] = podQosClass(spec);
  return status;
}

/**
 * UpdatePodCondition: the condition replaces the one of its type (its
 * transition time kept when the status is the same), or is appended.
 * Returns the new status; `status` is not changed.
 */
export function withPodCondition(status: unknown, type: string, value: 'True' | 'False', now: number): Obj {
  const s: Obj = isPlainObject(status) ? { ...status } : {};
  const conditions = list(s, 'conditions').filter(isPlainObject);
  const i = conditions.findIndex((c) => c['type'] === type);
  const old = i >= 0 ? conditions[i] : undefined;
  const transition = old && old['status'] === value ? (old['lastTransitionTime'] ?? null) : rfc3339(now);
  const next: Obj = { type, status: value, lastProbeTime: null, lastTransitionTime: transition };
  const updated = i >= 0 ? conditions.map((c, j) => (j === i ? next : c)) : [...conditions, next];
  if (Object.hasOwn(s, 'conditions')) {
    s['conditions'] = updated;
    return s;
  }
  // Where Go writes it: after observedGeneration and phase, before the rest.
  const out: Obj = {};
  for (const k of ['observedGeneration', 'phase']) if (Object.hasOwn(s, k)) out[k] = s[k];
  out['conditions'] = updated;
  for (const [k, v] of Object.entries(s)) if (!Object.hasOwn(out, k)) setOwn(out, k, v);
  return out;
}
