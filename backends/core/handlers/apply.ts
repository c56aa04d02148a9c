// Server-side apply: PATCH with application/apply-patch+yaml (JSON is YAML),
// or application/apply-patch+cbor under the CBORServingAndStorage gate.
// The body is the applier's whole intent; it creates the object when missing
// and otherwise merges under field ownership (lib/fieldmanager): conflicts
// are 409 unless force=true. The result is checked and written as any update.
//
// Authorization: the gateway authorized the request as `patch`; kube also
// requires `create` when an apply creates, which admission checks on that
// create (admission/applycreate.ts).
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
  type StatusCause,
} from '../../../lib/api/status.js';
import { decodeCbor, readBody } from '../../../lib/http/body.js';
import { isCborApply, PATCH_TYPES } from '../../../lib/patch/types.js';
import { applyIntent, ConflictError, conflictStatus, ItemKeyError } from '../../../lib/fieldmanager/index.js';
import { decodeValue } from '../../../lib/validation/decode.js';
import { checkObject, parseFieldValidation, problemMessages, type FieldValidation } from '../../../lib/validation/fields.js';
import { addWarnings } from '../../../lib/http/warnings.js';
import { pruneAndValidate } from '../../../lib/validation/structural.js';
import { apiVersionOf, type ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { objectKey } from '../keys.js';
import { checkEnvelope, checkPathAgreement, prepareUpdate, type UpdateTarget, updateTargetOf } from '../objects.js';
import { storeCall } from '../storeerrors.js';
import { outputFor } from '../render.js';
import { served } from '../conversion.js';
import { parseDryRun } from './params.js';
import { queryBool } from '../../../lib/api/querybool.js';
import { withOwnerVersions, writeContext } from './managedfields.js';
import { admitUpdate, commitUpdate, createObject, respond } from './write.js';
import { retryOnConflict, RETRY } from '../store/types.js';

/** fieldManager (required) and force, as kube's ValidatePatchOptions: 422 naming each problem. */
function applyOptions(query: URLSearchParams): { manager: string; force: boolean } {
  const manager = query.get('fieldManager') ?? '';
  const causes: StatusCause[] = [];
  if (manager === '') causes.push(cause.required('fieldManager', 'is required for apply patch'));
  else if (manager.length > 128) causes.push(cause.typeInvalid('fieldManager', manager, 'must be no more than 128 characters'));
  else if (/[^\x20-\x7e]/.test(manager)) causes.push(cause.invalid('fieldManager', manager, 'must only contain printable characters'));
  if (causes.length) throw invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', causes);
  return { manager, force: queryBool(query, 'force') ?? false };
}

interface Intent {
  readonly obj: Record<string, unknown>;
  readonly warnings: readonly string[];
  readonly setsResourceVersion: boolean;
}

/** The applied configuration: an object with apiVersion, kind and metadata, no managedFields, fields of the schema. */
function readIntent(t: ResourceType, buf: Buffer, cbor: boolean, level: FieldValidation, target: UpdateTarget): Intent {
  if (buf.length === 0) throw badRequest('the request body is empty: an apply configuration is required');
  // CBOR refuses a repeated key outright, so none are left to report.
  const { value, duplicates } = cbor ? { value: decodeCbor(buf), duplicates: [] } : decodeValue(buf.toString('utf8'), 'yaml');
  if (!isPlainObject(value)) throw badRequest('the apply configuration must be an object');
  for (const f of ['apiVersion', 'kind'] as const) {
    if (typeof value[f] !== 'string' || value[f] === '') throw badRequest(`the apply configuration is invalid: ${f} must be set`);
  }
  if (!isPlainObject(value['metadata'])) throw badRequest('the apply configuration is invalid: metadata must be set');
  const mf = value['metadata']['managedFields'];
  if (mf !== undefined && mf !== null) throw badRequest('metadata.managedFields must be nil');
  checkEnvelope(t, value); // apiVersion and kind must be the type's
  let obj = value;
  if (t.subresources.some((s) => s.name === 'status')) {
    // The main resource ignores an intent's status and /status everything else (kube's reset fields).
    const meta = value['metadata'];
    obj =
      target === 'status' || target === 'approval'
        ? {
            apiVersion: value['apiVersion'],
            kind: value['kind'],
            metadata: {
              ...(meta['name'] !== undefined ? { name: meta['name'] } : {}),
              ...(meta['namespace'] !== undefined ? { namespace: meta['namespace'] } : {}),
            },
            ...(value['status'] !== undefined ? { status: value['status'] } : {}),
          }
        : { ...value, status: undefined };
    if (obj['status'] === undefined) delete obj['status'];
  }
  // Unknown and duplicate fields per fieldValidation, wrong types refused; an intent may leave required fields out.
  const { unknown, causes } = t.schema ? pruneAndValidate(obj, t.schema) : { unknown: [], causes: [] };
  const messages = level === 'Ignore' ? [] : problemMessages({ unknown, duplicates });
  if (level === 'Strict' && messages.length > 0) throw badRequest(`strict decoding error: ${messages.join(', ')}`);
  const typeCauses = causes.filter((c) => c.reason !== 'FieldValueRequired');
  if (typeCauses.length > 0) throw invalid({ group: t.group, kind: t.kind }, String(value['metadata']['name'] ?? ''), typeCauses);
  const rv = (obj['metadata'] as Record<string, unknown>)['resourceVersion'];
  return { obj, warnings: level === 'Warn' ? messages : [], setsResourceVersion: typeof rv === 'string' && rv !== '' };
}

function applyFailure(t: ResourceType, err: unknown): unknown {
  if (err instanceof ConflictError) return conflictStatus(err.conflicts);
  if (err instanceof ItemKeyError) return badRequest(`failed to create typed patch object (${apiVersionOf(t)}, Kind=${t.kind}): ${err.message}`);
  return err;
}

export async function serverSideApply(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  const contentType = r.req.headers['content-type'];
  const cbor = isCborApply(contentType);
  if (cbor && !env.cbor) throw unsupportedMediaType(String(contentType), PATCH_TYPES);
  outputFor(env, t, r.req.headers.accept);
  const dryRun = parseDryRun(r.query, 'PatchOptions');
  const level = parseFieldValidation(r.query);
  const { manager, force } = applyOptions(r.query);
  const target: UpdateTarget = updateTargetOf(r.info.subresource);
  const intent = readIntent(t, r.body ?? (await readBody(r.req, env.bodyLimit)), cbor, level, target);
  const name = r.info.name;
  const gr: GroupResource = { group: t.group, resource: t.plural };
  const key = objectKey(t, r.info.namespace, name);
  const ctx = writeContext(env, t, r, manager);
  const gk = { group: t.group, kind: t.kind };
  // The merged object is validated as any write; its warnings are the intent's.
  const check = (merged: KObject): KObject => {
    if (JSON.stringify(merged).length > env.bodyLimit) throw tooLarge(env.bodyLimit);
    const obj = checkEnvelope(t, merged);
    checkObject(obj, t.schema, [], { level: 'Ignore', strictPrefix: '', gk, name });
    checkPathAgreement(t, obj, r.info.namespace, name);
    return obj;
  };
  addWarnings(r, intent.warnings);
  await retryOnConflict(
    async () => {
      const stored = await storeCall(gr, name, () => env.store.get(key));
      // Read through the version of the request (custom resources of several versions share their objects).
      const old = stored && (await served(env, t, stored));
      if (!old) {
        if (target !== 'main') throw notFound(gr, name);
        if (intent.setsResourceVersion) throw notFound(gr, name);
        let merged: KObject;
        try {
          merged = applyIntent(undefined, intent.obj, force, ctx).object;
        } catch (err) {
          throw applyFailure(t, err);
        }
        const managedFields = merged.metadata.managedFields;
        try {
          await createObject(env, t, r, check(merged), dryRun, (prepared) => {
            prepared.metadata.managedFields = managedFields;
          });
          return;
        } catch (err) {
          if (err instanceof StatusError && err.reason === 'AlreadyExists') return RETRY; // created meanwhile: apply over it
          throw err;
        }
      }
      let merged: KObject;
      try {
        merged = await withOwnerVersions(env, t, (versions) => applyIntent(old, intent.obj, force, versions ? { ...ctx, versions } : ctx).object);
      } catch (err) {
        throw applyFailure(t, err);
      }
      const managedFields = merged.metadata.managedFields;
      const next = await admitUpdate(env, t, r, check(merged), old, dryRun, (o) =>
        prepareUpdate(
          t,
          o,
          old,
          target,
          (n) => {
            if (managedFields === undefined) delete n.metadata.managedFields;
            else n.metadata.managedFields = managedFields;
          },
          env.clock(),
        ),
      );
      if (!next) {
        await respond(env, t, r, 200, old);
        return;
      }
      const outcome = await commitUpdate(env, t, r, key, next, old, dryRun);
      if (outcome === 'done') return;
      if (outcome === 'conflict' && intent.setsResourceVersion) throw conflict(gr, name, STALE_OBJECT);
      return RETRY;
    },
    () => conflict(gr, name, STALE_OBJECT),
  );
}
