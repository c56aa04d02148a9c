// create (POST) and update (PUT, including the status and finalize subresources).
import type { BackendRequest } from '../../../lib/api/backend.js';
import type { KObject } from '../../../lib/api/meta.js';
import { alreadyExists, conflict, invalid, notFound, STALE_OBJECT, type GroupResource, type StatusCause } from '../../../lib/api/status.js';
import { readBody } from '../../../lib/http/body.js';
import { decodeBody } from '../../../lib/validation/decode.js';
import { decodeFields, parseFieldValidation, strictPrefixOf } from '../../../lib/validation/fields.js';
import { addWarnings } from '../../../lib/http/warnings.js';
import { negotiateInput } from '../../../lib/http/negotiate.js';
import { sendObject, wantsPretty } from '../../../lib/http/respond.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { objectKey } from '../keys.js';
import { checkEnvelope, checkPathAgreement, isFinalized, prepareCreate, prepareUpdate, type UpdateTarget, updateTargetOf } from '../objects.js';
import { objectAs, outputFor } from '../render.js';
import type { Output } from '../../../lib/http/negotiate.js';
import { served, toStorage } from '../conversion.js';
import { fromStoreError, storeCall, storeFailure } from '../storeerrors.js';
import { retryOnConflict, RETRY, StoreError } from '../store/types.js';
import { parseDryRun } from './params.js';
import { createTracker, updateTracker, withOwnerVersions } from './managedfields.js';
import { customResourceWarnings } from '../crwarnings.js';
import { inKubeOrder } from '../keyorder.js';
import { admissionAttributes, withObject } from '../admission/attributes.js';
import type { AdmissionAttributes } from '../admission/types.js';
import { mutate, validate } from '../admission/run.js';

/**
 * The body as an object of this type: decoded (duplicate keys noted), envelope
 * checked, then checked against the type's schema per fieldValidation —
 * unknown fields dropped, warned or refused, wrong types and missing required
 * fields refused (422).
 */
function readObject(env: CoreEnv, t: ResourceType, r: BackendRequest): KObject | Promise<KObject> {
  // The gateway has read the body (dispatch.ts): no promise turn for it.
  if (r.body !== undefined) return objectOf(env, t, r, r.body);
  return readBody(r.req, env.bodyLimit).then((body) => objectOf(env, t, r, body));
}

function objectOf(env: CoreEnv, t: ResourceType, r: BackendRequest, body: Buffer): KObject {
  const format = negotiateInput(r.req.headers['content-type'], env.cbor);
  const level = parseFieldValidation(r.query);
  const { value, duplicates } = decodeBody(body, format);
  const obj = checkEnvelope(t, value);
  const name = obj.metadata.name ?? obj.metadata.generateName ?? '';
  // The Strict error's prefix is read only under Strict: not built per write (~0.5k instructions).
  const { warnings, causes } = decodeFields(obj, t.schema, duplicates, level, level === 'Strict' ? strictPrefixOf(t.kind, t.version) : '');
  // A write to the main resource of a kind with /status keeps or resets the status (kube's strategies), so
  // nothing missing in the status the client sent is a problem (a copied object with a partial status creates).
  const judged =
    causes.length > 0 && r.info.subresource === '' && t.subresources.some((s) => s.name === 'status') ? causes.filter((c) => !underStatus(c)) : causes;
  if (judged.length > 0) throw invalid({ group: t.group, kind: t.kind }, name, judged);
  addWarnings(r, warnings);
  return obj;
}

const underStatus = (c: StatusCause) => c.reason === 'FieldValueRequired' && c.field !== undefined && (c.field === 'status' || c.field.startsWith('status.'));

/**
 * Answers with `obj` (stored, or in the request's version) as the request's
 * version serves it; `stored` false for a dry run's object (never a stored state).
 */
export function respond(env: CoreEnv, t: ResourceType, r: BackendRequest, code: number, obj: KObject, stored = true): void | Promise<void> {
  const out = outputFor(env, t, r.req.headers.accept);
  // A promise only when a conversion webhook is asked: the answer of every other write takes no promise turn.
  if (t.conversionWebhook) return served(env, t, obj, stored).then((shown) => send(env, t, r, code, shown, out));
  send(env, t, r, code, obj, out);
}

function send(env: CoreEnv, t: ResourceType, r: BackendRequest, code: number, shown: KObject, out: Output): void {
  sendObject(r, code, objectAs(t, shown, out, r.query, env.clock()), out, wantsPretty(r.req, r.query));
}

/**
 * Creates `obj` through admission: mutating plugins, defaulting and
 * validation, validating plugins, then the store. `track` sets the
 * managedFields of the prepared object (default: the writer owns what it set).
 * A promise only when a step waits: on a store that writes at once (Store.createNow) a create
 * no plugin, webhook or conversion waits on is stored and answered before this returns.
 */
export function createObject(
  env: CoreEnv,
  t: ResourceType,
  r: BackendRequest,
  obj: KObject,
  dryRun: boolean,
  track = createTracker(env, t, r),
): void | Promise<void> {
  // Admission awaited only when a plugin waits: a create no plugin waits on takes no promise turn for it (run.ts).
  // A literal, not a spread given `object` (a hidden class per create: lib/api/own.ts, copyOwn).
  const attributes = admissionAttributes(t, r, { operation: 'CREATE', object: obj, oldObject: undefined, dryRun });
  const changed = mutate(env, attributes);
  if (changed instanceof Promise || t.prevalidate) return createMutatedLater(env, t, r, obj, dryRun, track, attributes, changed);
  return createMutated(env, t, r, changed ?? obj, dryRun, track, attributes);
}

/** createObject's mutating phase or the type's prevalidation waits. */
async function createMutatedLater(
  env: CoreEnv,
  t: ResourceType,
  r: BackendRequest,
  obj: KObject,
  dryRun: boolean,
  track: (prepared: KObject) => void,
  attributes: AdmissionAttributes,
  changed: KObject | undefined | Promise<KObject | undefined>,
): Promise<void> {
  const mutated = (changed instanceof Promise ? await changed : changed) ?? obj;
  if (t.prevalidate) await t.prevalidate(mutated, undefined);
  return createMutated(env, t, r, mutated, dryRun, track, attributes);
}

/** createObject from the mutated object on: prepared, validated, stored and answered. */
function createMutated(
  env: CoreEnv,
  t: ResourceType,
  r: BackendRequest,
  mutated: KObject,
  dryRun: boolean,
  track: (prepared: KObject) => void,
  attributes: AdmissionAttributes,
): void | Promise<void> {
  const prepared = prepareCreate(t, mutated, env.clock(), r.user, track);
  addWarnings(r, customResourceWarnings(t, prepared));
  const validated = validate(env, withObject(attributes, r, prepared));
  if (validated) return validated.then(() => storeCreated(env, t, r, prepared, dryRun));
  return storeCreated(env, t, r, prepared, dryRun);
}

/** The admitted object stored (converted to the storage version first) and answered; a dry run's only answered. */
function storeCreated(env: CoreEnv, t: ResourceType, r: BackendRequest, prepared: KObject, dryRun: boolean): void | Promise<void> {
  const name = prepared.metadata.name!;
  const key = objectKey(t, r.info.namespace, name);
  if (dryRun) return answerDryRunCreate(env, t, r, prepared, key, name);
  // Converted before the store is touched: a failing webhook stores nothing.
  const converted = toStorage(env, t, prepared);
  if (converted instanceof Promise) return converted.then((storable) => createStoredLater(env, t, r, key, name, storable));
  const createNow = env.store.createNow;
  if (createNow === undefined) return createStoredLater(env, t, r, key, name, converted);
  let stored: KObject;
  try {
    stored = createNow(key, converted);
  } catch (err) {
    throw storeFailure(err, { group: t.group, resource: t.plural }, name);
  }
  return respond(env, t, r, 201, stored);
}

async function createStoredLater(env: CoreEnv, t: ResourceType, r: BackendRequest, key: string, name: string, storable: KObject): Promise<void> {
  const stored = await storeCall({ group: t.group, resource: t.plural }, name, () => env.store.create(key, storable));
  const sent = respond(env, t, r, 201, stored);
  if (sent) await sent;
}

async function answerDryRunCreate(env: CoreEnv, t: ResourceType, r: BackendRequest, prepared: KObject, key: string, name: string): Promise<void> {
  const gr: GroupResource = { group: t.group, resource: t.plural };
  if (await storeCall(gr, name, () => env.store.get(key))) throw alreadyExists(gr, name);
  await respond(env, t, r, 201, inKubeOrder(t, prepared, false), false);
}

/**
 * A create: a promise only while the body is read or a step waits (createObject); the gateway's read
 * body (dispatch.ts) and a store that writes at once make none.
 */
export function create(env: CoreEnv, t: ResourceType, r: BackendRequest): void | Promise<void> {
  outputFor(env, t, r.req.headers.accept);
  const dryRun = parseDryRun(r.query, 'CreateOptions');
  // The gateway has read the body (dispatch.ts): no promise turn for it.
  if (r.body !== undefined) return createDecoded(env, t, r, objectOf(env, t, r, r.body), dryRun);
  return readBody(r.req, env.bodyLimit).then((body) => createDecoded(env, t, r, objectOf(env, t, r, body), dryRun));
}

function createDecoded(env: CoreEnv, t: ResourceType, r: BackendRequest, obj: KObject, dryRun: boolean): void | Promise<void> {
  r.audit?.requestObject(obj);
  checkPathAgreement(t, obj, r.info.namespace);
  return createObject(env, t, r, obj, dryRun);
}

export async function update(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  outputFor(env, t, r.req.headers.accept);
  const dryRun = parseDryRun(r.query, 'UpdateOptions');
  const target: UpdateTarget = updateTargetOf(r.info.subresource);
  const obj = await readObject(env, t, r);
  r.audit?.requestObject(obj);
  const name = r.info.name;
  checkPathAgreement(t, obj, r.info.namespace, name);
  const gr: GroupResource = { group: t.group, resource: t.plural };
  const key = objectKey(t, r.info.namespace, name);
  const unconditional = !obj.metadata.resourceVersion;
  await retryOnConflict(
    async () => {
      const stored = await storeCall(gr, name, () => env.store.get(key));
      // Read through the version of the request (custom resources of several versions share their objects).
      const old = stored && (await served(env, t, stored));
      if (!old) {
        if (target !== 'main' || !t.createOnUpdate) throw notFound(gr, name);
        if (!unconditional) throw notFound(gr, name);
        await createObject(env, t, r, obj, dryRun);
        return;
      }
      // obj is reused by a retry: prepareUpdate copies what it changes and defaulting is idempotent.
      const next = await admitUpdate(env, t, r, obj, old, dryRun, (o) =>
        withOwnerVersions(env, t, (versions) => prepareUpdate(t, o, old, target, updateTracker(env, t, r, versions), env.clock())),
      );
      if (!next) {
        await respond(env, t, r, 200, old);
        return;
      }
      const outcome = await commitUpdate(env, t, r, key, next, old, dryRun);
      if (outcome === 'done') return;
      if (outcome === 'conflict' && !unconditional) throw conflict(gr, name, STALE_OBJECT);
      return RETRY;
    },
    () => conflict(gr, name, STALE_OBJECT),
  );
}

/**
 * The admission of an update of `old` by `obj` (the object the request or its
 * patch produced): mutating plugins, then `prepare` (server-set fields,
 * defaulting, validation; undefined = nothing changes), then validating
 * plugins on what the store will keep — also when nothing changes, as kube
 * admits a no-op update.
 */
export async function admitUpdate(
  env: CoreEnv,
  t: ResourceType,
  r: BackendRequest,
  obj: KObject,
  old: KObject,
  dryRun: boolean,
  prepare: (obj: KObject) => KObject | undefined | Promise<KObject | undefined>,
): Promise<KObject | undefined> {
  // Literals, not a spread given `object` (a hidden class per write: lib/api/own.ts, copyOwn).
  const changed = mutate(env, admissionAttributes(t, r, { operation: 'UPDATE', object: obj, oldObject: old, dryRun }));
  const mutated = (changed instanceof Promise ? await changed : changed) ?? obj;
  if (t.prevalidate) await t.prevalidate(mutated, old);
  const next = await prepare(mutated);
  const validated = validate(env, admissionAttributes(t, r, { operation: 'UPDATE', object: next ?? old, oldObject: old, dryRun }));
  if (validated) await validated;
  return next;
}

/**
 * Stores `next` over `old` at old's revision and answers 200 (dry-run: answers
 * the would-be object, writes nothing). 'conflict' / 'gone' = the object
 * changed or went meanwhile: the caller retries (retryOnConflict) or refuses.
 */
export async function commitUpdate(
  env: CoreEnv,
  t: ResourceType,
  r: BackendRequest,
  key: string,
  next: KObject,
  old: KObject,
  dryRun: boolean,
): Promise<'done' | 'conflict' | 'gone'> {
  addWarnings(r, customResourceWarnings(t, next, old));
  if (dryRun) {
    const shown = inKubeOrder(t, next);
    await respond(env, t, r, 200, { ...shown, metadata: { ...shown.metadata, resourceVersion: old.metadata.resourceVersion } }, false);
    return 'done';
  }
  const rev = Number(old.metadata.resourceVersion);
  const name = old.metadata.name ?? '';
  try {
    if (next.metadata.deletionTimestamp && isFinalized(next)) {
      // The last finalizer went: the object is removed now.
      const removed = await env.store.delete(key, rev);
      await respond(env, t, r, 200, removed);
    } else {
      const storable = await toStorage(env, t, next);
      await respond(env, t, r, 200, await env.store.update(key, storable, rev));
    }
    return 'done';
  } catch (err) {
    if (err instanceof StoreError && err.code === 'conflict') return 'conflict';
    if (err instanceof StoreError && err.code === 'not-found') return 'gone';
    throw fromStoreError(err, { group: t.group, resource: t.plural }, name);
  }
}
