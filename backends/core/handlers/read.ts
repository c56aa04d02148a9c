// get and list.
import type { BackendRequest } from '../../../lib/api/backend.js';
import type { Output } from '../../../lib/http/negotiate.js';
import { sendBody, sendObject, wantsPretty, encode, protobufBody, prettyJson } from '../../../lib/http/respond.js';
import { encodeList } from '../../../lib/protobuf/codec.js';
import { encodeCborList } from '../../../lib/cbor/encode.js';
import { apiVersionOf } from '../../../lib/registry/types.js';
import { expired, notFound, type GroupResource } from '../../../lib/api/status.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { KObject, ListMeta } from '../../../lib/api/meta.js';
import type { CoreEnv } from '../env.js';
import { listPrefix, objectKey } from '../keys.js';
import { parseListRequest, parseRevision } from '../listoptions.js';
import { encodeContinue } from '../continuetoken.js';
import { convertsOnRead, listAs, listJson, listParts, listPiecesParts, objectAs, outputFor } from '../render.js';
import { served, servedAll } from '../conversion.js';
import { sendParts } from '../../../lib/http/parts.js';
import { fromStoreError, storeCall, storeFailure } from '../storeerrors.js';
import { StoreError, type ListOptions, type ListResult } from '../store/types.js';
import { listSelected, selectsConverted } from '../selection.js';

const NEWLINE = Buffer.from('\n');

const CONTINUE_EXPIRED =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/**
 * A promise only when the read has to wait: from a store that answers at once (Store.getNow) a GET
 * without resourceVersion of a type without a conversion webhook is answered before this returns.
 */
export function getObject(env: CoreEnv, t: ResourceType, r: BackendRequest): void | Promise<void> {
  const out = outputFor(env, t, r.req.headers.accept);
  const gr: GroupResource = { group: t.group, resource: t.plural };
  const name = r.info.name;
  const rvRaw = r.query.get('resourceVersion') ?? '';
  const getNow = rvRaw === '' && !t.conversionWebhook ? env.store.getNow : undefined;
  if (getNow === undefined) return getObjectLater(env, t, r, out, gr, rvRaw);
  const getPieceNow = out.format === 'json' && out.as === undefined && !convertsOnRead(t) ? env.store.getPieceNow : undefined;
  if (getPieceNow !== undefined && !wantsPretty(r.req, r.query)) {
    // JSON of a type served as stored, from a store that keeps its bytes: answered from them, nothing parsed.
    let piece: Buffer | undefined;
    try {
      piece = getPieceNow(objectKey(t, r.info.namespace, name));
    } catch (err) {
      throw storeFailure(err, gr, name);
    }
    if (!piece) throw notFound(gr, name);
    // The piece is the object's JSON and a comma; kube's answer ends in "\n" in its place.
    sendParts(r, 200, out.contentType, [piece.subarray(0, piece.length - 1), NEWLINE], piece.length);
    return;
  }
  let obj: KObject | undefined;
  try {
    obj = getNow(objectKey(t, r.info.namespace, name));
  } catch (err) {
    throw storeFailure(err, gr, name);
  }
  if (!obj) throw notFound(gr, name);
  sendObject(r, 200, objectAs(t, obj, out, r.query, env.clock()), out, wantsPretty(r.req, r.query));
}

async function getObjectLater(env: CoreEnv, t: ResourceType, r: BackendRequest, out: Output, gr: GroupResource, rvRaw: string): Promise<void> {
  const name = r.info.name;
  // resourceVersion=0: any state, from the watch cache (store.get with minRev 0).
  const minRev = rvRaw === '' ? undefined : parseRevision(rvRaw);
  const obj = await storeCall(gr, name, () => env.store.get(objectKey(t, r.info.namespace, name), minRev), minRev);
  if (!obj) throw notFound(gr, name);
  // Only webhook-converted types wait here: every other type's GET stays synchronous from the store's answer on.
  const shown = t.conversionWebhook ? await served(env, t, obj) : obj;
  sendObject(r, 200, objectAs(t, shown, out, r.query, env.clock()), out, wantsPretty(r.req, r.query));
}

export async function listObjects(env: CoreEnv, t: ResourceType, r: BackendRequest): Promise<void> {
  const out = outputFor(env, t, r.req.headers.accept);
  const gr: GroupResource = { group: t.group, resource: t.plural };
  const prefix = listPrefix(t, r.info.namespace);
  const lr = parseListRequest(t, r.query, prefix);
  // Selectors reading what a conversion may change run on the served objects (selection.ts); the store filters by identity only.
  const converted = lr.selection.content !== undefined && selectsConverted(env, t);
  const filter = converted ? lr.selection.identity : lr.filter;
  const mayMatchJson = converted ? undefined : lr.selection.mayMatchJson;
  const base = { ...(lr.limit > 0 ? { limit: lr.limit } : {}), ...(filter ? { filter } : {}), ...(filter && mayMatchJson ? { mayMatchJson } : {}) };
  const list = (opts: ListOptions) => (converted ? listSelected(env, t, prefix, opts, lr.selection.content!) : env.store.list(prefix, opts));
  let result: ListResult;
  const plan = lr.plan;
  switch (plan.kind) {
    case 'most-recent':
      result = await storeCall(gr, '', () => list(base));
      break;
    case 'any':
      // From the watch cache as it is: no round trip to a shared store.
      result = await storeCall(gr, '', () => list({ ...base, minRev: 0 }));
      break;
    case 'not-older-than':
      await storeCall(gr, '', () => env.store.waitForRev(plan.rev, env.tooLargeWaitMs), plan.rev);
      result = await storeCall(gr, '', () => list(base));
      break;
    case 'exact':
      result = await storeCall(gr, '', () => list({ ...base, rev: plan.rev }), plan.rev);
      break;
    case 'continue':
      try {
        result = await list({ ...base, rev: plan.point.rev, after: plan.point.after });
      } catch (err) {
        if (err instanceof StoreError && err.code === 'gone') throw expired(CONTINUE_EXPIRED);
        throw fromStoreError(err, gr, '', plan.point.rev);
      }
      break;
  }
  // A first page over every namespace without selectors knows the resource's count: the items, plus those after the page.
  if (env.onListed && plan.kind !== 'continue' && !lr.hasSelectors && r.info.namespace === '') {
    const after = result.continueAfter === undefined ? 0 : result.remaining;
    if (after !== undefined) env.onListed(t.group, t.plural, (result.pieces ?? result.items).length + after);
  }
  const meta: ListMeta = { resourceVersion: String(result.rev) };
  if (result.continueAfter !== undefined) {
    meta.continue = encodeContinue(result.rev, result.continueAfter);
    if (!lr.hasSelectors && result.remaining !== undefined && result.remaining > 0) meta.remainingItemCount = result.remaining;
  }
  if (result.pieces !== undefined && !convertsOnRead(t) && out.format === 'json' && out.as === undefined && !wantsPretty(r.req, r.query)) {
    // The store kept the items' list bytes: the page is joined from them, no item parsed (store/kept.ts).
    const { parts, length } = listPiecesParts(t, result.pieces, meta);
    sendParts(r, 200, out.contentType, parts, length);
    return;
  }
  sendList(env, t, r, !convertsOnRead(t) || converted ? result.items : await servedAll(env, t, result.items), meta, out);
}

function sendList(env: CoreEnv, t: ResourceType, r: BackendRequest, items: readonly KObject[], meta: ListMeta, out: Output): void {
  if (out.format === 'protobuf' && out.as === undefined) {
    const { parts, length } = protobufBody(() => encodeList(apiVersionOf(t), t.listKind, meta, items));
    sendParts(r, 200, out.contentType, parts, length);
    return;
  }
  if (out.format === 'cbor' && out.as === undefined) {
    sendBody(r, 200, out.contentType, encodeCborList(apiVersionOf(t), t.listKind, meta, items));
    return;
  }
  const pretty = wantsPretty(r.req, r.query);
  const shaped = listAs(t, items, meta, out, r.query, env.clock());
  if (shaped) {
    sendBody(r, 200, out.contentType, encode(shaped, out, pretty));
    return;
  }
  if (pretty) {
    sendBody(r, 200, out.contentType, prettyJson(JSON.parse(listJson(t, items, meta))));
    return;
  }
  const { parts, length } = listParts(t, items, meta);
  sendParts(r, 200, out.contentType, parts, length);
}
