// The managedFields of a request's write: who the manager is (fieldManager,
// else the User-Agent's program name) and the trackers the create and update
// paths call (lib/fieldmanager does the work).
import type { BackendRequest } from '../../../lib/api/backend.js';
import type { KObject } from '../../../lib/api/meta.js';
import { managerFromUserAgent, trackCreate, trackUpdate, type WriteContext } from '../../../lib/fieldmanager/index.js';
import { apiVersionOf, type ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { cause, invalid, type StatusCause } from '../../../lib/api/status.js';
import type { TrackManagedFields } from '../objects.js';

export function fieldManagerOf(r: BackendRequest): string {
  return r.query.get('fieldManager') || managerFromUserAgent(r.req.headers['user-agent']);
}

/** fieldManager of a create or update: at most 128 printable characters (kube's ValidateFieldManager), else 422 naming it. */
function checkFieldManager(r: BackendRequest, optionsKind: 'CreateOptions' | 'UpdateOptions'): void {
  const m = r.query.get('fieldManager');
  if (m === null) return;
  let c: StatusCause | undefined;
  if (m.length > 128) c = cause.typeInvalid('fieldManager', m, 'must be no more than 128 characters');
  else if (/[^\x20-\x7e]/.test(m)) c = cause.invalid('fieldManager', m, 'must only contain printable characters');
  if (c) throw invalid({ group: 'meta.k8s.io', kind: optionsKind }, '', [c]);
}

export function writeContext(env: CoreEnv, t: ResourceType, r: BackendRequest, manager = fieldManagerOf(r)): WriteContext {
  const sub = r.info.subresource;
  return { manager, apiVersion: apiVersionOf(t), subresource: sub === 'status' || sub === 'finalize' ? sub : '', now: env.clock(), node: t.schema };
}

export function createTracker(env: CoreEnv, t: ResourceType, r: BackendRequest): (obj: KObject) => void {
  checkFieldManager(r, 'CreateOptions');
  const c = writeContext(env, t, r);
  return (obj) => trackCreate(obj, c);
}

export function updateTracker(env: CoreEnv, t: ResourceType, r: BackendRequest): TrackManagedFields {
  if (r.req.method === 'PUT') checkFieldManager(r, 'UpdateOptions');
  const c = writeContext(env, t, r);
  return (next, old, requested) => trackUpdate(old, next, requested, c);
}
