// A CertificateSigningRequest's status as the signers, approvers, printers and
// validation read it: its conditions by type, and kube's condition timestamps.
import type { KObject } from '../api/meta.js';
import { isPlainObject, rfc3339 } from '../api/meta.js';

export type CsrConditionType = 'Approved' | 'Denied' | 'Failed';

/** status.conditions, only the object-shaped entries. */
export function conditionsOf(csr: KObject): Record<string, unknown>[] {
  const status = csr['status'];
  const list = isPlainObject(status) ? status['conditions'] : undefined;
  return Array.isArray(list) ? list.filter(isPlainObject) : [];
}

export function hasCondition(csr: KObject, type: CsrConditionType): boolean {
  return conditionsOf(csr).some((c) => c['type'] === type && c['status'] === 'True');
}

/** kube's IsCertificateRequestApproved: Approved and not Denied. */
export function isApproved(csr: KObject): boolean {
  return hasCondition(csr, 'Approved') && !hasCondition(csr, 'Denied');
}

export function certificateOf(csr: KObject): string {
  const status = csr['status'];
  const c = isPlainObject(status) ? status['certificate'] : undefined;
  return typeof c === 'string' ? c : '';
}

/**
 * kube's populateConditionTimestamps: a condition without lastUpdateTime gets
 * now; without lastTransitionTime, the old one of the same type and status, or now.
 */
export function stampConditions(next: KObject, old: KObject, now: number): void {
  const oldOf = new Map(conditionsOf(old).map((c) => [c['type'], c] as const));
  for (const c of conditionsOf(next)) {
    if (!c['lastUpdateTime']) c['lastUpdateTime'] = rfc3339(now);
    if (!c['lastTransitionTime']) {
      const before = oldOf.get(c['type']);
      c['lastTransitionTime'] = before && before['status'] === c['status'] && before['lastTransitionTime'] ? before['lastTransitionTime'] : rfc3339(now);
    }
  }
}
