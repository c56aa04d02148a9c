// PATCH of an object or its status: JSON patch, merge patch and strategic
// merge patch over the stored object, then the same admission, checks and
// write as PUT.
// Server-side apply (application/apply-patch+yaml) goes to ./apply.ts.
import type { BackendRequest } from '../../../lib/api/backend.js';
import { isPlainObject, type KObject } from '../../../lib/api/meta.js';
import {
  badRequest,
  cause,
  conflict,
  invalid,
  notFound,
  STALE_OBJECT,
  StatusError,
  tooLarge,
  unsupportedMediaType,
  type GroupResource,
} from '../../../lib/api/status.js';
import { readBody } from '../../../lib/http/body.js';
import { outputFor } from '../render.js';
import { served } from '../conversion.js';
import { parseJsonPatch } from '../../../lib/patch/json.js';
import { applyPatchDocument } from '../../../lib/patch/apply.js';
import { PatchError } from '../../../lib/patch/errors.js';
import { patchTypeOf, patchTypes, type PatchType } from '../../../lib/patch/types.js';
import { decodeValue } from '../../../lib/validation/decode.js';
import { checkObject, parseFieldValidation } from '../../../lib/validation/fields.js';
import { addWarnings } from '../../../lib/http/warnings.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { objectKey } from '../keys.js';
import { checkEnvelope, checkPathAgreement, prepareUpdate, type UpdateTarget, updateTargetOf } from '../objects.js';
import { storeCall } from '../storeerrors.js';
import { parseDryRun } from './params.js';
import { admitUpdate, commitUpdate, respond } from './write.js';
import { serverSideApply } from './apply.js';
import { updateTracker, withOwnerVersions } from './managedfields.js';
import { retryOnConflict, RETRY } from '../store/types.js';

/** fieldManager: at most 128 printable characters (kube's ValidateFieldManager). */
function checkFieldManager(query: URLSearchParams): void {
  const m = query.get('fieldManager');
  if (m === null) return;
  const causes = [];
  if (m.length > 128) causes.push(cause.typeInvalid('fieldManager', m, 'must be no more than 128 characters'));
  else if (/[^\x20-\x7e]/.test(m)) causes.push(cause.invalid('fieldManager', m, 'must only contain printable characters'));
  if (query.has('force')) causes.push(cause.forbidden('force', 'may not be specified for non-apply patch'));
  if (causes.length) throw invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', causes);
}

interface ParsedPatch {
  readonly type: PatchType;
  readonly doc: unknown;
  readonly duplicates: readonly string[];
  /** The patch itself names a resourceVersion: a precondition, never retried. */
  readonly setsResourceVersion: boolean;
}

function parsePatch(t: ResourceType, contentType: string | undefined, buf: Buffer, cbor: boolean): ParsedPatch {
  const type = patchTypeOf(contentType);
  if (type === undefined) throw unsupportedMediaType(String(contentType ?? ''), patchTypes(cbor));
  if (type === 'apply') throw new Error('unexpected patch type apply: served by serverSideApply');
  // Custom resources never take strategic merge patches (kube: their schemas carry no patch strategies); schema-less types neither.
  if (type === 'strategic' && (!t.schema || t.crd !== undefined)) {
    throw unsupportedMediaType(
      String(contentType),
      patchTypes(cbor).filter((p) => p !== 'application/strategic-merge-patch+json'),
    );
  }
  if (buf.length === 0) throw badRequest('the request body is empty: a patch is required');
  const { value, duplicates } = decodeValue(buf.toString('utf8'), 'json');
  if (type === 'json') {
    let ops;
    try {
      ops = parseJsonPatch(value);
    } catch (err) {
      throw patchFailure(err);
    }
    return {
      type,
      doc: ops,
      duplicates: [],
      setsResourceVersion: ops.some((o) => o.path === '/metadata/resourceVersion' && o.op !== 'test' && o.op !== 'remove'),
    };
  }
  if (!isPlainObject(value)) throw badRequest(`a ${type === 'merge' ? 'merge' : 'strategic merge'} patch must be a JSON object`);
  const meta = value['metadata'];
  return {
    type,
    doc: value,
    duplicates,
    setsResourceVersion: isPlainObject(meta) && typeof meta['resourceVersion'] === 'string' && meta['resourceVersion'] !== '',
  };
}

function patchFailure(err: unknown): unknown {
  if (!(err instanceof PatchError)) return err;
  switch (err.code) {
    case 'malformed':
      return badRequest(err.message);
    case 'too-large':
      return new StatusError(413, 'RequestEntityTooLarge', err.message, {});
    case 'failed':
      return new StatusError(422, 'Invalid', err.message, {});
  }
}

/** The patched object, before any checks. */
function applyPatch(t: ResourceType, p: ParsedPatch, old: KObject, budget: number): unknown {
  try {
    if (p.type === 'apply') throw new Error('unexpected patch type apply');
    return applyPatchDocument(p.type, old, p.doc, t.schema, budget);
  } catch (err) {
    throw patchFailure(err);
  }
}

export async function patch(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  if (patchTypeOf(r.req.headers['content-type']) === 'apply') return serverSideApply(env, t, r);
  outputFor(env, t, r.req.headers.accept);
  const dryRun = parseDryRun(r.query, 'PatchOptions');
  const level = parseFieldValidation(r.query);
  checkFieldManager(r.query);
  const p = parsePatch(t, r.req.headers['content-type'], r.body ?? (await readBody(r.req, env.bodyLimit)), env.cbor === true);
  const target: UpdateTarget = updateTargetOf(r.info.subresource);
  const name = r.info.name;
  const gr: GroupResource = { group: t.group, resource: t.plural };
  const key = objectKey(t, r.info.namespace, name);
  await retryOnConflict(
    async (tried) => {
      const stored = await storeCall(gr, name, () => env.store.get(key));
      // Read through the version of the request (custom resources of several versions share their objects).
      const old = stored && (await served(env, t, stored));
      if (!old) throw notFound(gr, name);
      const patched = applyPatch(t, p, old, env.bodyLimit);
      if (!isPlainObject(patched)) throw badRequest('the patched object must be a JSON object');
      if (JSON.stringify(patched).length > env.bodyLimit) throw tooLarge(env.bodyLimit);
      const obj = checkEnvelope(t, patched);
      const warnings = checkObject(obj, t.schema, p.duplicates, { level, strictPrefix: '', gk: { group: t.group, kind: t.kind }, name });
      checkPathAgreement(t, obj, r.info.namespace, name);
      const next = await admitUpdate(env, t, r, obj, old, dryRun, (o) =>
        withOwnerVersions(env, t, (versions) => prepareUpdate(t, o, old, target, updateTracker(env, t, r, versions), env.clock())),
      );
      if (tried === 0) addWarnings(r, warnings);
      if (!next) {
        await respond(env, t, r, 200, old);
        return;
      }
      const outcome = await commitUpdate(env, t, r, key, next, old, dryRun);
      if (outcome === 'done') return;
      if (outcome === 'conflict' && p.setsResourceVersion) throw conflict(gr, name, STALE_OBJECT);
      return RETRY;
    },
    () => conflict(gr, name, STALE_OBJECT),
  );
}
