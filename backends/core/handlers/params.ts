// Query and body options of writes: dryRun and DeleteOptions.
import { isPlainObject } from '../../../lib/api/meta.js';
import { badRequest, cause, invalid, type StatusCause } from '../../../lib/api/status.js';
import { queryBool } from '../../../lib/api/querybool.js';

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

export type PropagationPolicy = 'Orphan' | 'Background' | 'Foreground';

/** DeleteOptions as the handlers use them; absent fields were not set by the client. */
export interface DeleteOptions {
  dryRun: boolean;
  preconditions: { uid?: string; resourceVersion?: string };
  /** Whether the client sent a preconditions object at all (refused with the unsafe delete). */
  hasPreconditions: boolean;
  propagationPolicy?: PropagationPolicy;
  /** The deprecated boolean form of the policy (true = Orphan, false = Background). */
  orphanDependents?: boolean;
  gracePeriodSeconds?: number;
  /** Unsafe deletion of a corrupt object (honoured only with the AllowUnsafeMalformedObjectDeletion gate). */
  ignoreStoreReadErrorWithClusterBreakingPotential: boolean;
}

const POLICIES = ['Foreground', 'Background', 'Orphan'] as const;
const DELETE_OPTIONS = { group: 'meta.k8s.io', kind: 'DeleteOptions' };
const NOT_WITH_UNSAFE = 'can not be set together with ignoreStoreReadErrorWithClusterBreakingPotential';

/**
 * DeleteOptions from a non-empty body, else from the query — exactly one
 * source, as kube-apiserver's DeleteResource decodes them — then validated as
 * ValidateDeleteOptions does (422 Invalid listing every problem).
 */
export function parseDeleteOptions(query: URLSearchParams, body: Record<string, unknown> | undefined): DeleteOptions {
  if (body !== undefined && body['kind'] !== undefined && body['kind'] !== 'DeleteOptions') {
    throw badRequest(`the body of a delete must be a DeleteOptions object, not ${String(body['kind'])}`);
  }
  const src = body !== undefined ? fromBody(body) : fromQuery(query);
  const causes: StatusCause[] = [];
  const policy = src.propagationPolicy;
  if (policy !== undefined && !POLICIES.includes(policy as PropagationPolicy)) {
    causes.push(cause.notSupported('propagationPolicy', policy, [...POLICIES, 'nil']));
  }
  if (src.orphanDependents !== undefined && policy !== undefined) {
    causes.push(cause.invalid('propagationPolicy', policy, 'orphanDependents and deletionPropagation cannot be both set'));
  }
  let gracePeriodSeconds: number | undefined;
  if (src.gracePeriodSeconds !== undefined) {
    const n = Number(src.gracePeriodSeconds);
    if (src.gracePeriodSeconds === '' || !Number.isSafeInteger(n))
      causes.push(cause.invalid('gracePeriodSeconds', src.gracePeriodSeconds, 'must be an integer'));
    else gracePeriodSeconds = n;
  }
  const orphan = boolOf('orphanDependents', src.orphanDependents, causes);
  const unsafe = boolOf('ignoreStoreReadErrorWithClusterBreakingPotential', src.ignore, causes) === true;
  const dryRunValues = src.dryRun;
  if (unsafe) {
    if (dryRunValues.length > 0) causes.push(cause.invalid('dryRun', dryRunValues.join(','), NOT_WITH_UNSAFE));
    if (policy !== undefined) causes.push(cause.invalid('propagationPolicy', policy, NOT_WITH_UNSAFE));
    if (src.gracePeriodSeconds !== undefined) causes.push(cause.invalid('gracePeriodSeconds', src.gracePeriodSeconds, NOT_WITH_UNSAFE));
    if (src.preconditions !== undefined) causes.push(cause.invalid('preconditions', src.preconditions, NOT_WITH_UNSAFE));
    if (src.orphanDependents !== undefined) causes.push(cause.invalid('orphanDependents', src.orphanDependents, NOT_WITH_UNSAFE));
  }
  if (causes.length) throw invalid(DELETE_OPTIONS, '', causes);
  const pre = isPlainObject(src.preconditions) ? src.preconditions : {};
  const preconditions: DeleteOptions['preconditions'] = {};
  if (typeof pre['uid'] === 'string' && pre['uid']) preconditions.uid = pre['uid'];
  if (typeof pre['resourceVersion'] === 'string' && pre['resourceVersion']) preconditions.resourceVersion = pre['resourceVersion'];
  return {
    dryRun: parseDryRun(new URLSearchParams(dryRunValues.map((v): [string, string] => ['dryRun', v])), 'DeleteOptions'),
    preconditions,
    hasPreconditions: src.preconditions !== undefined && src.preconditions !== null,
    ...(policy !== undefined ? { propagationPolicy: policy as PropagationPolicy } : {}),
    ...(orphan !== undefined ? { orphanDependents: orphan } : {}),
    ...(gracePeriodSeconds !== undefined ? { gracePeriodSeconds } : {}),
    ignoreStoreReadErrorWithClusterBreakingPotential: unsafe,
  };
}

interface RawOptions {
  propagationPolicy?: string;
  orphanDependents?: unknown;
  gracePeriodSeconds?: unknown;
  ignore?: unknown;
  preconditions?: unknown;
  dryRun: string[];
}

function fromBody(b: Record<string, unknown>): RawOptions {
  const dry = b['dryRun'];
  if (dry !== undefined && dry !== null && !(Array.isArray(dry) && dry.every((v) => typeof v === 'string'))) {
    throw badRequest('DeleteOptions.dryRun: must be a list of strings');
  }
  const pol = b['propagationPolicy'];
  if (pol !== undefined && pol !== null && typeof pol !== 'string') throw badRequest('DeleteOptions.propagationPolicy: must be a string');
  const pre = b['preconditions'];
  if (pre !== undefined && pre !== null && !isPlainObject(pre)) throw badRequest('DeleteOptions.preconditions: must be an object');
  return {
    ...(typeof pol === 'string' ? { propagationPolicy: pol } : {}),
    ...(b['orphanDependents'] !== undefined && b['orphanDependents'] !== null ? { orphanDependents: b['orphanDependents'] } : {}),
    ...(b['gracePeriodSeconds'] !== undefined && b['gracePeriodSeconds'] !== null ? { gracePeriodSeconds: b['gracePeriodSeconds'] } : {}),
    ...(b['ignoreStoreReadErrorWithClusterBreakingPotential'] !== undefined && b['ignoreStoreReadErrorWithClusterBreakingPotential'] !== null
      ? { ignore: b['ignoreStoreReadErrorWithClusterBreakingPotential'] }
      : {}),
    ...(pre !== undefined && pre !== null ? { preconditions: pre } : {}),
    dryRun: Array.isArray(dry) ? (dry as string[]) : [],
  };
}

/** The query form (kube's parameter codec): preconditions have none; they travel only in a body. */
function fromQuery(q: URLSearchParams): RawOptions {
  const out: RawOptions = { dryRun: q.getAll('dryRun') };
  const pol = q.get('propagationPolicy');
  if (pol !== null) out.propagationPolicy = pol;
  const orphan = queryBool(q, 'orphanDependents');
  if (orphan !== undefined) out.orphanDependents = orphan;
  const grace = q.get('gracePeriodSeconds');
  if (grace !== null) out.gracePeriodSeconds = grace;
  const ignore = queryBool(q, 'ignoreStoreReadErrorWithClusterBreakingPotential');
  if (ignore !== undefined) out.ignore = ignore;
  return out;
}

/** A boolean option of a JSON body (the query form is already boolean). */
function boolOf(field: string, v: unknown, causes: StatusCause[]): boolean | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'boolean') return v;
  causes.push(cause.invalid(field, v, 'must be a boolean'));
  return undefined;
}
