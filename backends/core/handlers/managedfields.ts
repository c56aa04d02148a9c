// The managedFields of a request's write: who the manager is (fieldManager,
// else the User-Agent's program name) and the trackers the create and update
// paths call (lib/fieldmanager does the work).
import type { BackendRequest } from '../../../lib/api/backend.js';
import type { KObject } from '../../../lib/api/meta.js';
import {
  ConversionFailure,
  managerFromUserAgent,
  trackCreate,
  trackUpdate,
  withConversions,
  type Versions,
  type WriteContext,
} from '../../../lib/fieldmanager/index.js';
import { StatusError } from '../../../lib/api/status.js';
import { ownerConverter } from '../conversion.js';
import { apiVersionOf, type ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { cause, invalid, type StatusCause } from '../../../lib/api/status.js';
import type { TrackManagedFields } from '../objects.js';

export function fieldManagerOf(r: BackendRequest): string {
  return r.query.get('fieldManager') || managerFromUserAgent(r.req.headers['user-agent']);
}

/**
 * fieldManager of a create or update (null without one): at most 128 printable characters
 * (kube's ValidateFieldManager), else 422 naming it. Returned so the manager is not read again.
 */
function checkedFieldManager(r: BackendRequest, optionsKind: 'CreateOptions' | 'UpdateOptions'): string | null {
  const m = r.query.get('fieldManager');
  if (m === null) return m;
  let c: StatusCause | undefined;
  if (m.length > 128) c = cause.typeInvalid('fieldManager', m, 'must be no more than 128 characters');
  else if (/[^\x20-\x7e]/.test(m)) c = cause.invalid('fieldManager', m, 'must only contain printable characters');
  if (c) throw invalid({ group: 'meta.k8s.io', kind: optionsKind }, '', [c]);
  return m;
}

export function writeContext(env: CoreEnv, t: ResourceType, r: BackendRequest, manager = fieldManagerOf(r), versions?: Versions): WriteContext {
  const sub = r.info.subresource;
  return {
    manager,
    apiVersion: apiVersionOf(t),
    subresource: sub === 'status' || sub === 'finalize' || sub === 'scale' ? sub : '',
    now: env.clock(),
    node: t.schema,
    ...(versions ? { versions } : {}),
  };
}

/**
 * Runs a write step that tracks managedFields with the kind's versions, so owners
 * recorded through another version of a custom resource are compared in theirs
 * (`run` is run again after each conversion it needs; it must be repeatable). A
 * conversion that fails is kube's 500 with the converter's message and no reason.
 */
export async function withOwnerVersions<T>(env: CoreEnv, t: ResourceType, run: (versions: Versions | undefined) => T): Promise<T> {
  const conv = ownerConverter(env, t);
  if (!conv) return run(undefined);
  try {
    return await withConversions(conv, apiVersionOf(t), run);
  } catch (err) {
    if (err instanceof ConversionFailure) throw new StatusError(500, undefined, err.message, {});
    throw err;
  }
}

/**
 * kube's reset fields for an Update: a write to the main resource of a kind with a
 * /status subresource owns nothing under status (its strategy resets or keeps it),
 * so the writer's entry has no `f:status`. The view shares metadata, where the
 * trackers write managedFields.
 */
function resetsStatus(t: ResourceType, c: WriteContext): boolean {
  return c.subresource === '' && t.subresources.some((s) => s.name === 'status');
}

function withoutStatus(obj: KObject): KObject {
  if (!Object.hasOwn(obj, 'status')) return obj;
  const { status: _reset, ...rest } = obj as KObject & { status?: unknown };
  return rest as KObject;
}

export function createTracker(env: CoreEnv, t: ResourceType, r: BackendRequest): (obj: KObject) => void {
  const m = checkedFieldManager(r, 'CreateOptions');
  const c = writeContext(env, t, r, m || managerFromUserAgent(r.req.headers['user-agent']));
  if (resetsStatus(t, c)) return (obj) => trackCreate(withoutStatus(obj), c);
  return (obj) => trackCreate(obj, c);
}

export function updateTracker(env: CoreEnv, t: ResourceType, r: BackendRequest, versions?: Versions): TrackManagedFields {
  const m = r.req.method === 'PUT' ? checkedFieldManager(r, 'UpdateOptions') : r.query.get('fieldManager');
  const c = writeContext(env, t, r, m || managerFromUserAgent(r.req.headers['user-agent']), versions);
  if (resetsStatus(t, c)) return (next, old, requested) => trackUpdate(withoutStatus(old), withoutStatus(next), requested, c);
  return (next, old, requested) => trackUpdate(old, next, requested, c);
}
