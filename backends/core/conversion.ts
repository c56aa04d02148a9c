// Versions of custom resources on the way out of and into the store. With
// conversion None a version differs only in apiVersion (render.ts servedAs).
// With conversion Webhook, objects are stored in the storage version: a read
// through another version sends them to the CRD's webhook (a list's objects in
// one ConversionReview), and a write through another version is converted to
// the storage version before it is stored. Schema defaults of the served
// version apply after conversion, as kube defaults what it decodes.
import type { KObject } from '../../lib/api/meta.js';
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

/** Stored objects as the version `t` serves them (in order). */
export async function servedAll(env: CoreEnv, t: ResourceType, stored: readonly KObject[]): Promise<KObject[]> {
  const cfg = t.conversionWebhook;
  const want = apiVersionOf(t);
  if (!cfg || !env.conversion) return stored.map((o) => servedAs(t, o));
  const pending: number[] = [];
  stored.forEach((o, i) => {
    if (o.apiVersion !== want) pending.push(i);
  });
  if (pending.length === 0) return stored.map((o) => servedAs(t, o));
  const objs = pending.map((i) => stored[i]!);
  const kind = objs.length === 1 && stored.length === 1 ? t.kind : `${t.kind}List`;
  let converted: KObject[];
  try {
    converted = await env.conversion.convert(cfg, objs, want, gvkText(String(objs[0]!.apiVersion), kind), env.trace);
  } catch (err) {
    throw conversionFailed(err);
  }
  const out = stored.slice();
  pending.forEach((i, n) => {
    out[i] = converted[n]!;
  });
  return out.map((o) => servedAs(t, o));
}

/** One stored object as `t` serves it. */
export async function served(env: CoreEnv, t: ResourceType, stored: KObject): Promise<KObject> {
  if (!t.conversionWebhook || stored.apiVersion === apiVersionOf(t)) return servedAs(t, stored);
  return (await servedAll(env, t, [stored]))[0]!;
}

/** An object written through `t`, in the version it is stored in (the storage version for webhook conversion). */
export async function toStorage(env: CoreEnv, t: ResourceType, obj: KObject): Promise<KObject> {
  const cfg = t.conversionWebhook;
  const sv = t.storageVersion;
  if (t.convert && sv) return obj.apiVersion === apiVersionOf(sv) ? obj : t.convert(obj, apiVersionOf(sv));
  if (!cfg || !sv || !env.conversion) return obj;
  const want = apiVersionOf(sv);
  if (obj.apiVersion === want) return obj;
  try {
    const [converted] = await env.conversion.convert(cfg, [obj], want, gvkText(String(obj.apiVersion), t.kind), env.trace);
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
