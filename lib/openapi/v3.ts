// OpenAPI v3 documents per group/version, built from the types one group
// version serves (walk.ts: paths, operations and definitions) for `kubectl
// explain` and kubectl's client-side apply; each carries its hash, the ETag and
// the `?hash=` of its URL in the index. live.ts assembles them for the registry
// in force.
import { createHash } from 'node:crypto';
import type { ResourceType } from '../registry/types.js';
import { makeDocument, type Document } from '../discovery/document.js';
import { pathsOfTypes, schemasOf } from './walk.js';

export { definitionName } from './walk.js';

/** A group-version document; its ETag is its `hash` quoted, as kube-apiserver's are. */
export interface GroupVersionDocument extends Document {
  /** Upper-case hex SHA-512 of the body: the `?hash=` of its URL in the index. */
  readonly hash: string;
}

export interface OpenApiV3 {
  /** GET /openapi/v3: the index of group-version documents. */
  readonly root: Document;
  /** GET /openapi/v3/<api/v1 | apis/g/v>. */
  document(path: string): GroupVersionDocument | undefined;
  /** GET /openapi/v2: the Swagger 2.0 document, built at first use. */
  v2(): Document;
  /** The same document in gnostic's protobuf form, encoded once at first use. */
  v2Protobuf(): Buffer;
  /** A group-version document in gnostic's openapi.v3 protobuf form, encoded once at its first request. */
  v3Protobuf(doc: GroupVersionDocument): Buffer;
}

/** The document of one group version, from the types it serves. */
export function groupVersionDocument(types: readonly ResourceType[], serverVersion: string): GroupVersionDocument {
  const doc = makeDocument({
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: serverVersion },
    paths: pathsOfTypes(types),
    components: { schemas: schemasOf(types) },
  });
  const hash = createHash('sha512').update(doc.body).digest('hex').toUpperCase();
  return Object.freeze({ ...doc, etag: `"${hash}"`, hash });
}

/** The document path of a group version (`api/v1`, `apis/g/v`). */
export function groupVersionPath(group: string, version: string): string {
  return group ? `apis/${group}/${version}` : `api/${version}`;
}
