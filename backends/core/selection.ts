// Label and field selectors on custom resources converted by a webhook. kube
// serves each version from objects decoded into that version, so selectors
// (labels the webhook may set, selectableFields the version declares) read the
// object as the request's version serves it. The store filters stored objects,
// which for these types are in another version: here the store lists without
// the filter, the objects are converted (one review per store page) and then
// filtered, page after page until the request's limit is filled.
import type { KObject } from '../../lib/api/meta.js';
import type { ResourceType } from '../../lib/registry/types.js';
import type { CoreEnv } from './env.js';
import { served, servedAll } from './conversion.js';
import { objectKey } from './keys.js';
import type { ListOptions, ListResult } from './store/types.js';

/** Whether `t`'s selectors must read converted objects (the store cannot). */
export function selectsConverted(env: CoreEnv, t: ResourceType): boolean {
  return t.conversionWebhook !== undefined && env.conversion !== undefined;
}

/**
 * Served objects of a list: `opts.filter` (identity selectors, which no
 * conversion changes) runs in the store, `content` on the served objects. The
 * same ListResult the store gives, items already in `t`'s version.
 */
export async function listSelected(env: CoreEnv, t: ResourceType, prefix: string, opts: ListOptions, content: (obj: KObject) => boolean): Promise<ListResult> {
  const limit = opts.limit ?? 0;
  const items: KObject[] = [];
  let read: ListOptions = { ...opts };
  let rev: number | undefined;
  for (;;) {
    if (limit > 0) read.limit = limit;
    const page = await env.store.list(prefix, read);
    rev ??= page.rev;
    const served = await servedAll(env, t, page.items);
    for (let i = 0; i < served.length; i++) {
      if (!content(served[i]!)) continue;
      items.push(served[i]!);
      if (limit > 0 && items.length === limit) {
        const last = i === served.length - 1 && page.continueAfter === undefined;
        const stored = page.items[i]!;
        return { rev, items, ...(last ? {} : { continueAfter: objectKey(t, stored.metadata.namespace ?? '', stored.metadata.name ?? '') }) };
      }
    }
    if (page.continueAfter === undefined) return { rev, items };
    // Later pages read the snapshot of the first.
    read = { rev, after: page.continueAfter, ...(opts.filter ? { filter: opts.filter } : {}) };
  }
}

/** A watch event's object and its previous state as `t` serves them (one review each, as kube converts each object it decodes). */
export async function servedPair(env: CoreEnv, t: ResourceType, obj: KObject, prev: KObject | undefined): Promise<[KObject, KObject | undefined]> {
  const now = await served(env, t, obj);
  return [now, prev && (await served(env, t, prev))];
}
