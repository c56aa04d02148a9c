// Versions of custom resources on the way out of and into the store. With
// conversion None a version differs only in apiVersion (render.ts servedAs).
// With conversion Webhook, objects are stored in the storage version: a read
// through another version sends them to the CRD's webhook (a list's objects in
// one ConversionReview), and a write through another version is converted to
// the storage version before it is stored. Schema defaults of the served
// version apply after conversion, as kube defaults what it decodes.
// A stored state is converted once per served version: kube's watch cache
// decodes each revision once, so repeated reads never reach the webhook
// again; here the webhook's answer is kept by uid and resourceVersion.
import { LRUCache } from 'lru-cache';
import type { KObject } from '../../lib/api/meta.js';
import { frozenJsonCopy } from '../../lib/api/json.js';
import { StatusError } from '../../lib/api/status.js';
import { ConversionError, ConversionWebhooks } from '../../lib/crd/conversionwebhook.js';
import { gvkText } from '../../lib/crd/conversionreview.js';
import type { ServiceObjects, ServiceRef } from '../../lib/api/servicetargets.js';
import type { AsyncConverter } from '../../lib/fieldmanager/index.js';
import { apiVersionOf, type ResourceType } from '../../lib/registry/types.js';
import type { CoreEnv } from './env.js';
import { servedAs } from './render.js';
import { getCachedFirst } from './store/types.js';
import { typePrefix } from './keys.js';

/** The webhook caller of a core backend: services resolved from its own store. */
export function conversionWebhooks(env: Pick<CoreEnv, 'store' | 'log'>): ConversionWebhooks {
  return new ConversionWebhooks({ serviceObjects: (ref) => serviceObjects(env, ref), log: env.log });
}

const SERVICES = { group: '', plural: 'services' };
const SLICES = { group: 'discovery.k8s.io', plural: 'endpointslices' };
const ENDPOINTS = { group: '', plural: 'endpoints' };

/** Read from the store's watch cache (a conversion per request should not cost three round trips to a shared store). */
export async function serviceObjects(env: Pick<CoreEnv, 'store'>, ref: ServiceRef): Promise<ServiceObjects> {
  const [service, slices, endpoints] = await Promise.all([
    getCachedFirst(env.store, `${typePrefix(SERVICES)}${ref.namespace}/${ref.name}`),
    env.store.list(`${typePrefix(SLICES)}${ref.namespace}/`, { minRev: 0 }),
    getCachedFirst(env.store, `${typePrefix(ENDPOINTS)}${ref.namespace}/${ref.name}`),
  ]);
  return { service, slices: slices.items, endpoints };
}

/** kube answers a failed conversion with the converter's error as it is: 500, no reason. */
function conversionFailed(err: unknown): unknown {
  return err instanceof ConversionError ? new StatusError(500, undefined, err.message, {}) : err;
}

/** Converted states kept per served version; a type is rebuilt when its CRD changes, and its cache goes with it. */
const CACHED_PER_VERSION = 10_000;
const convertedStates = new WeakMap<ResourceType, LRUCache<string, KObject>>();

function cacheOf(t: ResourceType): LRUCache<string, KObject> {
  let c = convertedStates.get(t);
  if (!c) convertedStates.set(t, (c = new LRUCache({ max: CACHED_PER_VERSION })));
  return c;
}

/** A stored state's identity: uid and resourceVersion (none for an object not stored, such as a dry run's). */
function stateKey(o: KObject): string | undefined {
  const { uid, resourceVersion } = o.metadata;
  return uid && resourceVersion ? `${uid}/${resourceVersion}` : undefined;
}

/**
 * Stored objects as the version `t` serves them (in order). `stored`: they are
 * states of the store (so their conversion is kept); false for a dry run's
 * result, which carries the stored resourceVersion but other content.
 */
export async function servedAll(env: CoreEnv, t: ResourceType, objects: readonly KObject[], stored = true): Promise<KObject[]> {
  const cfg = t.conversionWebhook;
  const want = apiVersionOf(t);
  if (!cfg || !env.conversion) return objects.map((o) => servedAs(t, o));
  const cache = stored ? cacheOf(t) : undefined;
  const out = objects.slice();
  const pending: number[] = [];
  objects.forEach((o, i) => {
    if (o.apiVersion === want) return;
    const key = cache && stateKey(o);
    const hit = key && cache.get(key);
    if (hit) out[i] = hit;
    else pending.push(i);
  });
  if (pending.length > 0) {
    const objs = pending.map((i) => objects[i]!);
    const kind = objs.length === 1 && objects.length === 1 ? t.kind : `${t.kind}List`;
    let converted: KObject[];
    try {
      converted = await env.conversion.convert(cfg, objs, want, gvkText(String(objs[0]!.apiVersion), kind), env.trace);
    } catch (err) {
      throw conversionFailed(err);
    }
    pending.forEach((i, n) => {
      const c = frozenJsonCopy(converted[n]!);
      const key = cache && stateKey(objs[n]!);
      if (key) cache.set(key, c);
      out[i] = c;
    });
  }
  return out.map((o) => servedAs(t, o));
}

/** One object as `t` serves it (`stored`: as servedAll). */
export async function served(env: CoreEnv, t: ResourceType, obj: KObject, stored = true): Promise<KObject> {
  if (!t.conversionWebhook || obj.apiVersion === apiVersionOf(t)) return servedAs(t, obj);
  return (await servedAll(env, t, [obj], stored))[0]!;
}

/** An object written through `t`, in the version it is stored in (the storage version for webhook conversion). */
export function toStorage(env: CoreEnv, t: ResourceType, obj: KObject): KObject | Promise<KObject> {
  const cfg = t.conversionWebhook;
  const sv = t.storageVersion;
  if (t.convert && sv) return obj.apiVersion === apiVersionOf(sv) ? obj : t.convert(obj, apiVersionOf(sv));
  if (!cfg || !sv || !env.conversion) return obj;
  const want = apiVersionOf(sv);
  if (obj.apiVersion === want) return obj;
  return viaWebhook(env, cfg, t, obj, want);
}

/** toStorage's webhook call: a promise only when a webhook converts (every other write takes no promise turn). */
async function viaWebhook(env: CoreEnv, cfg: NonNullable<ResourceType['conversionWebhook']>, t: ResourceType, obj: KObject, want: string): Promise<KObject> {
  try {
    const [converted] = await env.conversion!.convert(cfg, [obj], want, gvkText(String(obj.apiVersion), t.kind), env.trace);
    return converted!;
  } catch (err) {
    throw conversionFailed(err);
  }
}

/**
 * The converter of server-side apply's owners in other versions (kube's
 * versionConverter over the CRD's converter): a version the CRD does not have
 * fails with crConverter's words; conversion None only changes apiVersion; Webhook
 * asks the webhook, one object at a time as kube does.
 */
export function ownerConverter(env: CoreEnv, t: ResourceType): AsyncConverter | undefined {
  const versions = t.versionSchemas;
  if (!versions) return undefined;
  const cfg = t.conversionWebhook;
  return {
    node: (apiVersion) => versions.get(apiVersion),
    async convert(obj, apiVersion) {
      if (t.convert) return t.convert(obj as KObject, apiVersion);
      if (!versions.has(apiVersion)) throw new Error(`request to convert CR to an invalid group/version: ${apiVersion}`);
      if (!versions.has(String(obj['apiVersion']))) throw new Error(`request to convert CR from an invalid group/version: ${String(obj['apiVersion'])}`);
      if (!cfg || !env.conversion) return { ...obj, apiVersion };
      const [converted] = await env.conversion.convert(cfg, [obj as KObject], apiVersion, gvkText(String(obj['apiVersion']), t.kind));
      return converted!;
    },
  };
}
