// client-go's LeaderElectionRecord and its home, the spec of a
// coordination.k8s.io/v1 Lease (resourcelock.LeaseSpecFromRecord and back):
// what every candidate reads and the holder writes.
import type { KObject } from '../../../../lib/api/meta.js';

export interface ElectionRecord {
  /** Empty when released. */
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
  /** MicroTime text, as the Lease carries it. */
  readonly acquireTime: string;
  readonly renewTime: string;
  readonly leaseTransitions: number;
}

/** metav1.MicroTime as JSON: RFC 3339 in UTC with six fractional digits. */
export function microTime(ms: number): string {
  const whole = Math.floor(ms);
  const micros = Math.floor((ms - whole) * 1000);
  const iso = new Date(whole).toISOString(); // …T12:34:56.789Z
  return `${iso.slice(0, -1)}${String(micros).padStart(3, '0')}Z`;
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : '';
}

function int(v: unknown): number {
  return typeof v === 'number' && Number.isSafeInteger(v) ? v : 0;
}

/** The record a Lease holds; a missing or malformed field reads as its zero value, as client-go's. */
export function recordOf(lease: KObject): ElectionRecord {
  const spec = lease['spec'];
  const s = spec !== null && typeof spec === 'object' && !Array.isArray(spec) ? (spec as Record<string, unknown>) : {};
  return {
    holderIdentity: Object.hasOwn(s, 'holderIdentity') ? str(s['holderIdentity']) : '',
    leaseDurationSeconds: Object.hasOwn(s, 'leaseDurationSeconds') ? int(s['leaseDurationSeconds']) : 0,
    acquireTime: Object.hasOwn(s, 'acquireTime') ? str(s['acquireTime']) : '',
    renewTime: Object.hasOwn(s, 'renewTime') ? str(s['renewTime']) : '',
    leaseTransitions: Object.hasOwn(s, 'leaseTransitions') ? int(s['leaseTransitions']) : 0,
  };
}

/** The raw form candidates compare to notice a change (client-go compares the record's JSON bytes). */
export function rawRecord(r: ElectionRecord): string {
  return JSON.stringify([r.holderIdentity, r.leaseDurationSeconds, r.acquireTime, r.renewTime, r.leaseTransitions]);
}

/** A Lease object carrying `r`: a new one, or `current` with its spec replaced (metadata kept for the compare-and-swap). */
export function leaseWith(r: ElectionRecord, namespace: string, name: string, current?: KObject): KObject {
  const spec = {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: r.acquireTime,
    renewTime: r.renewTime,
    leaseTransitions: r.leaseTransitions,
  };
  if (current) return { ...structuredClone(current), spec };
  return { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec };
}
