// Response bodies of reads: lists (built as JSON text around each stored
// object's memoized JSON), Tables and PartialObjectMetadata.
import type { KObject, ListMeta } from '../../lib/api/meta.js';
import { frozenJsonCopy, jsonBytes, jsonEqual, listItemBytes, toJson } from '../../lib/api/json.js';
import { badRequest, internalError, type StatusError } from '../../lib/api/status.js';
import { negotiateOutput, RESOURCE_AS, type Output } from '../../lib/http/negotiate.js';
import { hasSchema } from '../../lib/protobuf/codec.js';
import { apiVersionOf, type Column, type ResourceType } from '../../lib/registry/types.js';
import { inSortedOrder } from '../../lib/schema/keyorder.js';
import type { CoreEnv } from './env.js';

const DEFAULT_COLUMNS: readonly Column[] = [
  {
    name: 'Name',
    type: 'string',
    format: 'name',
    description:
      'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated.',
    priority: 0,
    cell: (o) => o.metadata.name ?? '',
  },
  {
    name: 'Created At',
    type: 'date',
    description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
    priority: 0,
    cell: (o) => o.metadata.creationTimestamp ?? '',
  },
];

/**
 * A stored object as the version `t` serves it. Custom resources of several
 * versions share one key range; with conversion None a version differs only in
 * apiVersion, which kube rewrites on the way out. The object itself when
 * nothing differs (its memoized JSON stays in use). Webhook conversion is
 * asynchronous: conversion.ts converts first, then calls this.
 */
export function servedAs(t: ResourceType, obj: KObject): KObject {
  if (t.convert) return convertedAs(t, t.convert, obj);
  if (t.crd === undefined) return obj;
  const apiVersion = apiVersionOf(t);
  if (t.conversionWebhook && obj.apiVersion !== apiVersion) throw conversionUnavailable(t, String(obj.apiVersion));
  if (!t.readDefaults && obj.apiVersion === apiVersion) return obj;
  // Schema defaults apply on read as well (a default added to the CRD later shows on old objects):
  // once per stored object and type, kept while the stored object lives. A version change alone is
  // kept too: a new object per read would be serialized again by every watcher it reaches.
  const m = readMemo.get(obj);
  if (m?.t === t) return m.served;
  if (!t.readDefaults) {
    const renamed = Object.isFrozen(obj) ? Object.freeze({ ...obj, apiVersion }) : { ...obj, apiVersion };
    if (Object.isFrozen(renamed)) readMemo.set(obj, { t, served: renamed });
    return renamed;
  }
  const copy = structuredClone(obj) as KObject;
  copy.apiVersion = apiVersion;
  t.readDefaults(copy);
  const served = jsonEqual(copy, obj) ? obj : frozenJsonCopy(copy);
  readMemo.set(obj, { t, served });
  return served;
}

const readMemo = new WeakMap<KObject, { t: ResourceType; served: KObject }>();

/** A built-in kind's stored object in `t`'s version: converted once per stored object and type, as read defaults are. */
function convertedAs(t: ResourceType, convert: NonNullable<ResourceType['convert']>, obj: KObject): KObject {
  const apiVersion = apiVersionOf(t);
  if (obj.apiVersion === apiVersion) return obj;
  const m = readMemo.get(obj);
  if (m?.t === t) return m.served;
  const served = frozenJsonCopy(convert(obj, apiVersion));
  readMemo.set(obj, { t, served });
  return served;
}

/** Whether objects of `t` may be stored in another version than the one `t` serves. */
export function convertsOnRead(t: ResourceType): boolean {
  return t.crd !== undefined || t.convert !== undefined;
}

/**
 * An object of a webhook-converted type that reached rendering unconverted (a
 * path that skipped conversion.ts): a 500, never a silent None conversion.
 */
function conversionUnavailable(t: ResourceType, from: string): StatusError {
  return internalError(`conversion webhook for ${from}, Kind=${t.kind} failed: the object was not converted (CRD ${t.crd ?? ''})`);
}

/** hasSchema by type (types are frozen, schemas fixed): asked on every read, it joined a string and searched a list each time. */
const protobufByType = new WeakMap<ResourceType, boolean>();

function protobufOf(t: ResourceType): boolean {
  let has = protobufByType.get(t);
  if (has === undefined) protobufByType.set(t, (has = hasSchema(apiVersionOf(t), t.kind)));
  return has;
}

/** The representation of answers about `t`: protobuf only for types with a protobuf schema, CBOR when the gate is on. */
export function outputFor(env: Pick<CoreEnv, 'cbor'>, t: ResourceType, accept: string | undefined): Output {
  return negotiateOutput(accept, RESOURCE_AS, { protobuf: protobufOf(t), cbor: env.cbor });
}

export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** TableOptions.includeObject; another value is kube's 400 (ValidateTableOptions), never silently Metadata. */
export function includeObjectOf(query: URLSearchParams): IncludeObject {
  return includeObjectFrom(query.get('includeObject'));
}

/** includeObjectOf of the parameter's value (null: absent). */
export function includeObjectFrom(v: string | null): IncludeObject {
  if (v === null || v === '' || v === 'Metadata') return 'Metadata';
  if (v === 'None' || v === 'Object') return v;
  throw badRequest(
    `Unable to convert to Table as requested: includeObject: Unsupported value: ${JSON.stringify(v)}: supported values: "Metadata", "None", "Object"`,
  );
}

export function partialMetadata(obj: KObject, asVersion: string): Record<string, unknown> {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${asVersion}`, metadata: obj.metadata };
}

function columnsOf(t: ResourceType): readonly Column[] {
  return t.columns ?? DEFAULT_COLUMNS;
}

export function table(
  t: ResourceType,
  objs: readonly KObject[],
  listMeta: ListMeta,
  asVersion: string,
  include: IncludeObject,
  now: number,
  headers = true,
): Record<string, unknown> {
  const cols = columnsOf(t);
  objs = objs.map((o) => servedAs(t, o));
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${asVersion}`,
    metadata: listMeta,
    ...(headers
      ? {
          columnDefinitions: cols.map((c) => ({ name: c.name, type: c.type, format: c.format ?? '', description: c.description, priority: c.priority })),
        }
      : {}),
    rows: objs.map((o) => ({
      cells: cols.map((c) => c.cell(o, now)),
      ...(include === 'None' ? {} : { object: include === 'Object' ? o : partialMetadata(o, asVersion) }),
    })),
  };
}

/**
 * A list's JSON around its items, in kube's key order: a built-in kind's
 * list struct (kind, apiVersion, metadata, items; ListMeta's own order), or a
 * custom resource's unstructured list, whose keys encoding/json sorts
 * (apiVersion, items, kind, metadata).
 */
function listEnds(t: ResourceType, meta: ListMeta): [head: string, end: string] {
  if (t.crd === undefined) return [JSON.stringify({ kind: t.listKind, apiVersion: apiVersionOf(t), metadata: meta }).slice(0, -1) + ',"items":[', ']}\n'];
  return [
    `{"apiVersion":${JSON.stringify(apiVersionOf(t))},"items":[`,
    `],"kind":${JSON.stringify(t.listKind)},"metadata":${JSON.stringify(inSortedOrder(meta))}}\n`,
  ];
}

/** A list body in JSON as kube's encoder writes it (ending in "\n"), concatenating each item's memoized serialization. */
export function listJson(t: ResourceType, items: readonly KObject[], meta: ListMeta): string {
  const [head, end] = listEnds(t, meta);
  let body = head;
  for (let i = 0; i < items.length; i++) {
    if (i > 0) body += ',';
    body += toJson(items[i]!);
  }
  return body + end;
}

const LIST_END = Buffer.from(']}\n');

/**
 * listJson as the byte pieces it is made of: the head, then each item's
 * memoized UTF-8 JSON with its separating comma (encoded once per stored
 * revision, shared by every list that sends it; the last item's piece is
 * viewed without the comma), and the end; nothing copied.
 */
export function listParts(t: ResourceType, items: readonly KObject[], meta: ListMeta): { parts: Buffer[]; length: number } {
  const last = items.length - 1;
  return joinPieces(t, meta, items.length, (i) => (i === last ? jsonBytes(items[i]!) : listItemBytes(items[i]!)));
}

/**
 * listParts of items given as their list pieces (a store's ListResult.pieces: each item's listItemBytes),
 * for a type served as stored (!convertsOnRead): the same bytes, no object read.
 */
export function listPiecesParts(t: ResourceType, pieces: readonly Buffer[], meta: ListMeta): { parts: Buffer[]; length: number } {
  const last = pieces.length - 1;
  return joinPieces(t, meta, pieces.length, (i) => (i === last ? pieces[i]!.subarray(0, pieces[i]!.length - 1) : pieces[i]!));
}

/** A list's head, the n pieces piece(i) gives, and its end. */
function joinPieces(t: ResourceType, meta: ListMeta, n: number, piece: (i: number) => Buffer): { parts: Buffer[]; length: number } {
  const [head, end] = listEnds(t, meta);
  const tail = t.crd === undefined ? LIST_END : Buffer.from(end, 'utf8');
  const parts: Buffer[] = [Buffer.from(head, 'utf8')];
  let length = parts[0]!.length + tail.length;
  for (let i = 0; i < n; i++) {
    const b = piece(i);
    parts.push(b);
    length += b.length;
  }
  parts.push(tail);
  return { parts, length };
}

/** The body of a list in the negotiated representation, or undefined for plain JSON (use listJson; protobuf: encodeList). */
export function listAs(t: ResourceType, items: readonly KObject[], meta: ListMeta, out: Output, query: URLSearchParams, now: number): object | undefined {
  switch (out.as) {
    case 'Table':
      return table(t, items, meta, out.asVersion ?? 'v1', includeObjectOf(query), now);
    case 'PartialObjectMetadataList':
    case 'PartialObjectMetadata':
      return {
        kind: 'PartialObjectMetadataList',
        apiVersion: `meta.k8s.io/${out.asVersion ?? 'v1'}`,
        metadata: meta,
        items: items.map((o) => partialMetadata(o, out.asVersion ?? 'v1')),
      };
    default:
      return out.format === 'json' ? undefined : { kind: t.listKind, apiVersion: apiVersionOf(t), metadata: meta, items };
  }
}

/** One object in the negotiated representation. */
export function objectAs(t: ResourceType, obj: KObject, out: Output, query: URLSearchParams, now: number): object {
  switch (out.as) {
    case 'Table':
      return table(t, [obj], { resourceVersion: obj.metadata.resourceVersion ?? '' }, out.asVersion ?? 'v1', includeObjectOf(query), now);
    case 'PartialObjectMetadata':
    case 'PartialObjectMetadataList':
      return partialMetadata(obj, out.asVersion ?? 'v1');
    default:
      return servedAs(t, obj);
  }
}
