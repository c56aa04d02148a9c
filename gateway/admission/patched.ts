// The object a PATCH would produce, computed from the stored object, so
// that admission plugins judge a PATCH exactly as they judge the update it
// amounts to. A patch that does not apply yields undefined: the backend
// then refuses it with the proper error.
import { isPlainObject, type KObject } from '../../lib/api/meta.js';
import type { ObjectSource } from '../../lib/api/objectsource.js';
import { readBody } from '../../lib/http/body.js';
import { applyPatchDocument } from '../../lib/patch/apply.js';
import { patchTypeOf } from '../../lib/patch/types.js';
import type { Registry } from '../../lib/registry/index.js';
import type { RequestContext } from '../pipeline/context.js';

export async function objectAfterPatch(ctx: RequestContext, objects: ObjectSource, registry: Registry, bodyLimit: number): Promise<KObject | undefined> {
  const i = ctx.info;
  const type = patchTypeOf(ctx.req.headers['content-type']);
  if (type !== 'json' && type !== 'merge' && type !== 'strategic') return undefined;
  ctx.body ??= await readBody(ctx.req, bodyLimit);
  const current = await objects.get(i.apiGroup, i.resource, i.namespace, i.name);
  if (!current) return undefined;
  let doc: unknown;
  try { doc = JSON.parse(ctx.body.toString('utf8')); } catch { return undefined; }
  const schema = registry.lookup(i.apiGroup, i.apiVersion, i.resource)?.schema;
  try {
    const out = applyPatchDocument(type, structuredClone(current) as Record<string, unknown>, doc, schema, bodyLimit);
    return isPlainObject(out) ? { ...out, metadata: isPlainObject(out['metadata']) ? out['metadata'] : {} } as KObject : undefined;
  } catch {
    return undefined;
  }
}
