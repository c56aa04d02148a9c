// The order of groups and versions in discovery. kube-apiserver orders /apis
// by each group's APIService priority (kube-aggregator's default priorities),
// highest first, then by name; kubectl resolves short names and ambiguous
// resources in that order, so Gatehouse keeps it.
import { ownValue } from '../api/own.js';

/** groupPriorityMinimum of kube's built-in groups (pkg/controlplane/apiserver/aggregator.go). */
const GROUP_PRIORITY: Readonly<Record<string, number>> = {
  'apiregistration.k8s.io': 18000,
  apps: 17800,
  'events.k8s.io': 17750,
  'authentication.k8s.io': 17700,
  'authorization.k8s.io': 17600,
  autoscaling: 17500,
  batch: 17400,
  'certificates.k8s.io': 17300,
  'networking.k8s.io': 17200,
  policy: 17100,
  'rbac.authorization.k8s.io': 17000,
  'storage.k8s.io': 16800,
  'admissionregistration.k8s.io': 16700,
  'apiextensions.k8s.io': 16700,
  'scheduling.k8s.io': 16600,
  'coordination.k8s.io': 16500,
  'node.k8s.io': 16300,
  'discovery.k8s.io': 16200,
  'flowcontrol.apiserver.k8s.io': 16100,
  'internal.apiserver.k8s.io': 16000,
  'resource.k8s.io': 15900,
  'storagemigration.k8s.io': 15800,
};

/** What kube gives groups it does not know (the priority CRDs get). */
export const DEFAULT_GROUP_PRIORITY = 1000;

export function groupPriority(group: string): number {
  return (ownValue(GROUP_PRIORITY, group) as number | undefined) ?? DEFAULT_GROUP_PRIORITY;
}

/** Higher priority first, then by name: the aggregator's ByGroupPriorityMinimum. */
export function compareGroups(a: string, b: string): number {
  return groupPriority(b) - groupPriority(a) || (a < b ? -1 : a > b ? 1 : 0);
}

const KUBE_VERSION = /^v(\d+)(?:(alpha|beta)(\d+))?$/;
const STABILITY: Readonly<Record<string, number>> = { '': 3, beta: 2, alpha: 1 };

/**
 * version.CompareKubeAwareVersionStrings as a sort comparator, most preferred
 * first: GA before beta before alpha, higher numbers first, then anything that
 * does not look like a Kubernetes version, alphabetically.
 */
export function compareVersions(a: string, b: string): number {
  const ma = KUBE_VERSION.exec(a);
  const mb = KUBE_VERSION.exec(b);
  if (!ma || !mb) {
    if (ma) return -1;
    if (mb) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  }
  // Stability decides first (v10 > v2 > v11beta2 > v3beta1 > v12alpha1), then the numbers.
  return STABILITY[mb[2] ?? '']! - STABILITY[ma[2] ?? '']! || Number(mb[1]) - Number(ma[1]) || Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}
