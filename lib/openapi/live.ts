// The OpenAPI documents of the registry in force (`/openapi/v3`, its group
// version documents and their protobuf forms, `/openapi/v2` and its protobuf
// form), following the
// registry's swaps. A swap (a CRD change) rebuilds only the group versions
// whose types changed: a registry swap keeps every other CRD's ResourceType
// objects, so a group version whose types are the same objects keeps its
// document (and its protobuf form, remembered per document); the v2 document
// is built at its first request after a swap.
import type { Registry } from '../registry/index.js';
import { derived, type RegistrySource } from '../registry/live.js';
import type { ResourceType } from '../registry/types.js';
import { makeDocument } from '../discovery/document.js';
import { buildOpenApiV2 } from './v2.js';
import { encodeOpenApiV2 } from './v2proto.js';
import { encodeOpenApiV3 } from './v3proto.js';
import { groupVersionDocument, groupVersionPath, type GroupVersionDocument, type OpenApiV3 } from './v3.js';

/** A group version's document and the types it was built from. */
interface Built {
  readonly types: readonly ResourceType[];
  readonly doc: GroupVersionDocument;
}

/** Each group-version document's protobuf form, kept as long as the document is (across swaps that reuse it). */
const V3_PROTOBUF = new WeakMap<GroupVersionDocument, Buffer>();

function v3Protobuf(doc: GroupVersionDocument): Buffer {
  let bytes = V3_PROTOBUF.get(doc);
  if (!bytes) V3_PROTOBUF.set(doc, (bytes = encodeOpenApiV3(JSON.parse(doc.body) as Record<string, unknown>)));
  return bytes;
}

const sameTypes = (a: readonly ResourceType[], b: readonly ResourceType[]) => a.length === b.length && a.every((t, i) => t === b[i]);

/** The documents of one registry; `previous` (the last registry's group versions) are reused where their types are. */
export function buildOpenApiV3(
  registry: Registry,
  serverVersion: string,
  previous?: ReadonlyMap<string, Built>,
): OpenApiV3 & { readonly built: ReadonlyMap<string, Built> } {
  const built = new Map<string, Built>();
  const gvs: Array<[string, string]> = [
    ...registry.coreVersions().map((v) => ['', v] as [string, string]),
    ...registry.groups().flatMap((g) => g.versions.map((v) => [g.name, v] as [string, string])),
  ];
  const index: Record<string, { serverRelativeURL: string }> = {};
  for (const [group, version] of gvs) {
    const types = registry.resourcesOf(group, version);
    const path = groupVersionPath(group, version);
    const before = previous?.get(path);
    const b = before && sameTypes(before.types, types) ? before : { types, doc: groupVersionDocument(types, serverVersion) };
    built.set(path, b);
    index[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${b.doc.hash}` };
  }
  const root = makeDocument({ paths: index });
  let v2: ReturnType<typeof buildOpenApiV2> | undefined;
  let v2Protobuf: Buffer | undefined;
  const v2Json = () => (v2 ??= buildOpenApiV2(registry, serverVersion));
  return {
    built,
    root,
    document: (path) => built.get(path)?.doc,
    v2: v2Json,
    v2Protobuf: () => (v2Protobuf ??= encodeOpenApiV2(JSON.parse(v2Json().body) as Record<string, unknown>)),
    v3Protobuf,
  };
}

/** The documents of the registry in force, rebuilt once per registry swap (custom resources), never per request. */
export function liveOpenApiV3(registry: RegistrySource, serverVersion: string): OpenApiV3 {
  let last: ReadonlyMap<string, Built> | undefined;
  const current = derived(registry, (r) => {
    const docs = buildOpenApiV3(r, serverVersion, last);
    last = docs.built;
    return docs;
  });
  return {
    get root() {
      return current().root;
    },
    document: (path) => current().document(path),
    v2: () => current().v2(),
    v2Protobuf: () => current().v2Protobuf(),
    v3Protobuf,
  };
}
