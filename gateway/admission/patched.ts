// The object a PATCH would produce, computed from the stored object, so
// that admission plugins judge a PATCH exactly as they judge the update it
// amounts to. A patch that does not apply yields undefined: the backend
// then refuses it with the proper error.
import { isPlainObject, type KObject } from '../../lib/api/meta.js';
import type { ObjectSource } from '../../lib/api/objectsource.js';
import { readBody } from '../../lib/http/body.js';
import { applyPatchDocument } from '../../lib/patch/apply.js';
import { isCborApply, patchTypeOf } from '../../lib/patch/types.js';
import type { RegistrySource } from '../../lib/registry/live.js';
import type { RequestContext } from '../pipeline/context.js';
import { parse as parseYaml } from 'yaml';
import { decodeCborObject } from '../../lib/cbor/decode.js';
import { applyIntent } from '../../lib/fieldmanager/index.js';
import type { StructNode } from '../../lib/schema/model.js';

export async function objectAfterPatch(ctx: RequestContext, objects: ObjectSource, registry: RegistrySource, bodyLimit: number): Promise<KObject | undefined> {
  const i = ctx.info;
  const type = patchTypeOf(ctx.req.headers['content-type']);
  if (type === undefined) return undefined;
  ctx.body ??= await readBody(ctx.req, bodyLimit);
  const current = await objects.get(i.apiGroup, i.resource, i.namespace, i.name);
  if (type === 'apply')
    return objectAfterApply(
      ctx.body,
      isCborApply(ctx.req.headers['content-type']),
      current,
      registry.current.lookup(i.apiGroup, i.apiVersion, i.resource)?.schema,
      i.apiVersion,
    );
  if (!current) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(ctx.body.toString('utf8'));
  } catch {
    return undefined;
  }
  const schema = registry.current.lookup(i.apiGroup, i.apiVersion, i.resource)?.schema;
  try {
    const out = applyPatchDocument(type, structuredClone(current) as Record<string, unknown>, doc, schema, bodyLimit);
    return isPlainObject(out) ? ({ ...out, metadata: isPlainObject(out['metadata']) ? out['metadata'] : {} } as KObject) : undefined;
  } catch {
    return undefined;
  }
}

/** Server-side apply: the merged object (forced: conflicts are the backend's to report), or the intent when it creates. */
function objectAfterApply(body: Buffer, cbor: boolean, current: KObject | undefined, schema: StructNode | undefined, apiVersion: string): KObject | undefined {
  try {
    // An apply-patch+cbor body the gate refuses is the backend's 415 to give; reading it here changes nothing.
    const intent: unknown = cbor ? decodeCborObject(body) : parseYaml(body.toString('utf8'));
    if (!isPlainObject(intent) || !isPlainObject(intent['metadata'])) return undefined;
    if (!current) return intent as KObject;
    return applyIntent(current, intent, true, { manager: 'admission', apiVersion, subresource: '', now: 0, node: schema }).object;
  } catch {
    return undefined;
  }
}
