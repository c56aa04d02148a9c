// An APIService object read once into a frozen, typed value: what routing,
// availability and discovery need (apiregistration.k8s.io/v1 field meanings).
import type { KObject } from '../../lib/api/meta.js';
import type { ServiceRef } from '../../lib/api/servicetargets.js';

export type { ServiceRef } from '../../lib/api/servicetargets.js';

export interface Condition {
  readonly status: 'True' | 'False' | 'Unknown';
  readonly reason: string;
  readonly message: string;
}

export interface ApiServiceInfo {
  readonly name: string;
  readonly group: string;
  readonly version: string;
  readonly groupPriorityMinimum: number;
  readonly versionPriority: number;
  /** Absent = served in-process (a local APIService). */
  readonly service?: ServiceRef;
  /** PEM text of spec.caBundle (base64 in the object). */
  readonly caPem?: string;
  readonly insecureSkipTLSVerify: boolean;
  /** status.conditions[type=Available], when set. */
  readonly available?: Condition;
  /** What the transport depends on: a change rebuilds agents. */
  readonly transportKey: string;
}

const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const int = (v: unknown, d: number) => (typeof v === 'number' && Number.isInteger(v) ? v : d);
const str = (v: unknown) => (typeof v === 'string' ? v : '');

export function readApiService(o: KObject): ApiServiceInfo {
  const spec = obj(o['spec']);
  const svc = spec['service'] === undefined || spec['service'] === null ? undefined : obj(spec['service']);
  const service: ServiceRef | undefined = svc
    ? Object.freeze({ namespace: str(svc['namespace']), name: str(svc['name']), port: int(svc['port'], 443) })
    : undefined;
  const ca = str(spec['caBundle']);
  const caPem = ca ? Buffer.from(ca, 'base64').toString('utf8') : undefined;
  const insecure = spec['insecureSkipTLSVerify'] === true;
  const conds = Array.isArray(obj(o['status'])['conditions']) ? (obj(o['status'])['conditions'] as unknown[]) : [];
  const c = conds.map(obj).find((x) => x['type'] === 'Available');
  const status = str(c?.['status']);
  const available: Condition | undefined = c
    ? Object.freeze({ status: status === 'True' || status === 'False' ? status : 'Unknown', reason: str(c['reason']), message: str(c['message']) })
    : undefined;
  return Object.freeze({
    name: o.metadata.name ?? '',
    group: str(spec['group']),
    version: str(spec['version']),
    groupPriorityMinimum: int(spec['groupPriorityMinimum'], 0),
    versionPriority: int(spec['versionPriority'], 0),
    ...(service ? { service } : {}),
    ...(caPem ? { caPem } : {}),
    insecureSkipTLSVerify: insecure,
    ...(available ? { available } : {}),
    transportKey: JSON.stringify([service, ca, insecure]),
  });
}

/** The name a backend's serving certificate must carry (kube's `<service>.<namespace>.svc`). */
export function serverNameOf(s: ServiceRef): string {
  return `${s.name}.${s.namespace}.svc`;
}

export function isAvailable(a: ApiServiceInfo): boolean {
  return a.available?.status === 'True';
}
