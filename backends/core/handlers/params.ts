// Query and body options of writes: dryRun and DeleteOptions.
import { isPlainObject } from '../../../lib/api/meta.js';
import { badRequest, cause, invalid, type StatusCause } from '../../../lib/api/status.js';

/** dryRun: absent/empty or `All`; anything else is 422, as kube-apiserver answers. */
export function parseDryRun(query: URLSearchParams, optionsKind: string, fromBody: unknown = undefined): boolean {
  const values = [...query.getAll('dryRun')];
  if (Array.isArray(fromBody)) values.push(...fromBody.map(String));
  const causes: StatusCause[] = [];
  let all = false;
  for (const v of values) {
    if (v === 'All') all = true;
    else if (v !== '') causes.push(cause.notSupported('dryRun', v, ['All']));
  }
  if (causes.length) throw invalid({ group: 'meta.k8s.io', kind: optionsKind }, '', causes);
  return all;
}

export interface DeleteOptions {
  dryRun: boolean;
  preconditions: { uid?: string; resourceVersion?: string };
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  gracePeriodSeconds?: number;
}

const POLICIES = ['Orphan', 'Background', 'Foreground'] as const;

/** DeleteOptions from the body (if any) and the query; query values win, as in kube-apiserver. */
export function parseDeleteOptions(query: URLSearchParams, body: Record<string, unknown> | undefined): DeleteOptions {
  const b = body ?? {};
  if (b['kind'] !== undefined && b['kind'] !== 'DeleteOptions') throw badRequest(`the body of a delete must be a DeleteOptions object, not ${String(b['kind'])}`);
  const causes: StatusCause[] = [];
  const pre = isPlainObject(b['preconditions']) ? b['preconditions'] : {};
  const preconditions: DeleteOptions['preconditions'] = {};
  if (typeof pre['uid'] === 'string' && pre['uid']) preconditions.uid = pre['uid'];
  if (typeof pre['resourceVersion'] === 'string' && pre['resourceVersion']) preconditions.resourceVersion = pre['resourceVersion'];
  const policy = query.get('propagationPolicy') ?? (typeof b['propagationPolicy'] === 'string' ? b['propagationPolicy'] : undefined);
  if (policy !== undefined && !POLICIES.includes(policy as typeof POLICIES[number])) causes.push(cause.notSupported('propagationPolicy', policy, POLICIES));
  const graceRaw = query.get('gracePeriodSeconds') ?? b['gracePeriodSeconds'];
  let gracePeriodSeconds: number | undefined;
  if (graceRaw !== undefined && graceRaw !== null) {
    const n = Number(graceRaw);
    if (!Number.isInteger(n)) causes.push(cause.invalid('gracePeriodSeconds', graceRaw, 'must be an integer'));
    else gracePeriodSeconds = n;
  }
  if (causes.length) throw invalid({ group: 'meta.k8s.io', kind: 'DeleteOptions' }, '', causes);
  return {
    dryRun: parseDryRun(query, 'DeleteOptions', b['dryRun']),
    preconditions,
    ...(policy ? { propagationPolicy: policy as DeleteOptions['propagationPolicy'] } : {}),
    ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {}),
  };
}
