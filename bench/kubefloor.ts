// The floor of the GET and CREATE rows (issue 46): the least a server must do
// to give kube-apiserver's answer to the bench's GET of one ConfigMap and its
// create of one, over the same mTLS connection (bench/rig.ts, as bare.ts).
// Per request:
//   - the client's identity: TLS has verified the certificate; its subject is
//     read once per connection (as gateway/authn/x509.ts keeps it);
//   - the request info (lib/api/requestinfo.ts, the project's own parser);
//   - a cached authorization decision (one Map lookup by user, verb, namespace,
//     resource), an APF seat (a counter taken and given back), auditing off;
//   - GET: the stored object's bytes, answered with the headers kube writes
//     (Content-Type, Cache-Control, Audit-Id, the two X-Kubernetes-Pf-* uids,
//     Date, Content-Length);
//   - CREATE: the body read and parsed, its fields checked against the
//     ConfigMap's (strict decoding's unknown-field check, not its duplicate
//     check), the namespace's existence, kube's validation of a ConfigMap
//     (name, label keys and values, data keys, size), uid, resourceVersion,
//     creationTimestamp, the creator's managedFields entry (hand-written for
//     a ConfigMap's flat shape), kube's key order, serialized once: the bytes
//     are both the answer and what later GETs send; 201, 409 if it exists.
// No watch cache, admission plugins beyond the namespace check, metrics,
// tracing or generality: what Gatehouse does beyond this is the gap between
// this row and its own.
//
// argv: port cert key ca
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { parseRequestInfo } from '../lib/api/requestinfo.js';
import { rfc3339 } from '../lib/api/meta.js';
import { managerFromUserAgent } from '../lib/fieldmanager/index.js';
import { serveCommands } from './procs.js';
import { readBody } from './body.js';
import { baselineServer } from './rig.js';

const [port, certFile, keyFile, caFile] = process.argv.slice(2);

/** Stored objects' bytes by `namespace/name`: a GET's answer is these bytes. */
const configMaps = new Map<string, Buffer>();
const namespaces = new Set<string>();
let resourceVersion = 1;

/** The subject read off each connection's verified certificate, once. */
const identities = new WeakMap<object, string>();
function identity(req: IncomingMessage): string | undefined {
  const socket = req.socket as TLSSocket;
  let user = identities.get(socket);
  if (user === undefined) {
    if (!socket.authorized) return undefined;
    const cn = socket.getPeerCertificate().subject?.CN;
    user = Array.isArray(cn) ? cn[0]! : (cn ?? '');
    identities.set(socket, user);
  }
  return user;
}

/** Authorization decisions already made, by user, verb, namespace and resource (the first one is allowed). */
const decisions = new Map<string, boolean>();
function allowed(user: string, verb: string, namespace: string, resource: string): boolean {
  const key = `${user}\0${verb}\0${namespace}\0${resource}`;
  let d = decisions.get(key);
  if (d === undefined) decisions.set(key, (d = true));
  return d;
}

// The exempt flow schema and priority level's uids, as the real server names them in its headers.
const FLOW_SCHEMA_UID = randomUUID();
const PRIORITY_LEVEL_UID = randomUUID();
let seats = 0;
const SEAT_LIMIT = 600;

function answer(res: ServerResponse, code: number, body: Buffer): void {
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    'Content-Length': body.length,
    'Audit-Id': randomUUID(),
    'X-Kubernetes-Pf-Flowschema-Uid': FLOW_SCHEMA_UID,
    'X-Kubernetes-Pf-Prioritylevel-Uid': PRIORITY_LEVEL_UID,
  });
  res.end(body);
}

function status(res: ServerResponse, code: number, reason: string, message: string): void {
  answer(res, code, Buffer.from(JSON.stringify({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code })));
}

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const LABEL_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const TOP_FIELDS = new Set(['apiVersion', 'kind', 'metadata', 'data', 'binaryData', 'immutable']);
const META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

type Obj = Record<string, unknown>;
const own = (o: Obj, k: string): unknown => (Object.hasOwn(o, k) ? o[k] : undefined);
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Strict decoding's warnings (fieldValidation=Warn, kube's default): fields a ConfigMap does not have. */
function unknownFields(obj: Obj, meta: Obj): string[] {
  const out: string[] = [];
  for (const k of Object.keys(obj)) if (!TOP_FIELDS.has(k)) out.push(`299 - "unknown field \\"${k}\\""`);
  for (const k of Object.keys(meta)) if (!META_FIELDS.has(k)) out.push(`299 - "unknown field \\"metadata.${k}\\""`);
  return out;
}

/** kube's validation of a ConfigMap's create (ValidateConfigMap with ObjectMeta's), as messages. */
function invalid(obj: Obj, meta: Obj): string | undefined {
  const name = own(meta, 'name');
  if (typeof name !== 'string' || name.length > 253 || !DNS1123_SUBDOMAIN.test(name)) return 'metadata.name: Invalid value';
  const labels = own(meta, 'labels');
  if (labels !== undefined) {
    if (!isObj(labels)) return 'metadata.labels: Invalid value';
    for (const k of Object.keys(labels)) {
      const v = labels[k];
      const slash = k.lastIndexOf('/');
      const n = slash < 0 ? k : k.slice(slash + 1);
      if (n.length > 63 || !LABEL_NAME.test(n) || (slash >= 0 && !DNS1123_SUBDOMAIN.test(k.slice(0, slash)))) return 'metadata.labels: Invalid value';
      if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v)) return 'metadata.labels: Invalid value';
    }
  }
  let size = 0;
  const data = own(obj, 'data');
  if (data !== undefined) {
    if (!isObj(data)) return 'data: Invalid value';
    for (const k of Object.keys(data)) {
      const v = data[k];
      if (k.length > 253 || !CONFIG_KEY.test(k) || typeof v !== 'string') return 'data: Invalid value';
      size += k.length + v.length;
    }
  }
  if (size > 1024 * 1024) return 'data: Too long';
  return undefined;
}

/** `{".":{},"f:k1":{},…}` for an object's keys, sorted as FieldsV1 writes them. */
function keysFields(o: Obj): Obj {
  const out: Obj = { '.': {} };
  for (const k of Object.keys(o).sort()) out[`f:${k}`] = {};
  return out;
}

/** The creator's FieldsV1 for a ConfigMap: every data key and label it set (kube's entry for this shape). */
function createdFields(obj: Obj, meta: Obj): Obj {
  const fields: Obj = {};
  const data = own(obj, 'data');
  if (isObj(data)) fields['f:data'] = keysFields(data);
  const m: Obj = {};
  const annotations = own(meta, 'annotations');
  if (isObj(annotations)) m['f:annotations'] = keysFields(annotations);
  const labels = own(meta, 'labels');
  if (isObj(labels)) m['f:labels'] = keysFields(labels);
  if (Object.keys(m).length > 0) fields['f:metadata'] = m;
  return fields;
}

function create(req: IncomingMessage, res: ServerResponse, namespace: string): void {
  void readBody(req).then((text) => {
    let obj: Obj;
    try {
      obj = JSON.parse(text) as Obj;
    } catch {
      status(res, 400, 'BadRequest', 'the body is not JSON');
      return;
    }
    const meta = own(obj, 'metadata');
    if (!isObj(meta) || own(obj, 'kind') !== 'ConfigMap' || own(obj, 'apiVersion') !== 'v1') {
      status(res, 400, 'BadRequest', 'not a v1 ConfigMap');
      return;
    }
    const warnings = unknownFields(obj, meta);
    const problem = invalid(obj, meta);
    if (problem !== undefined) {
      status(res, 422, 'Invalid', problem);
      return;
    }
    const ns = own(meta, 'namespace');
    if (ns !== undefined && ns !== namespace) {
      status(res, 400, 'BadRequest', 'the namespace of the object does not match the namespace of the request');
      return;
    }
    if (!namespaces.has(namespace)) {
      status(res, 404, 'NotFound', `namespaces "${namespace}" not found`);
      return;
    }
    const name = meta['name'] as string;
    const key = `${namespace}/${name}`;
    if (configMaps.has(key)) {
      status(res, 409, 'AlreadyExists', `configmaps "${name}" already exists`);
      return;
    }
    const now = rfc3339(Date.now());
    const stored: Obj = {
      kind: 'ConfigMap',
      apiVersion: 'v1',
      metadata: {
        name,
        namespace,
        uid: randomUUID(),
        resourceVersion: String(++resourceVersion),
        creationTimestamp: now,
        ...(own(meta, 'labels') !== undefined ? { labels: meta['labels'] } : {}),
        ...(own(meta, 'annotations') !== undefined ? { annotations: meta['annotations'] } : {}),
        managedFields: [
          {
            manager: managerFromUserAgent(req.headers['user-agent']),
            operation: 'Update',
            apiVersion: 'v1',
            time: now,
            fieldsType: 'FieldsV1',
            fieldsV1: createdFields(obj, meta),
          },
        ],
      },
      ...(own(obj, 'immutable') !== undefined ? { immutable: obj['immutable'] } : {}),
      ...(own(obj, 'data') !== undefined ? { data: obj['data'] } : {}),
      ...(own(obj, 'binaryData') !== undefined ? { binaryData: obj['binaryData'] } : {}),
    };
    const bytes = Buffer.from(JSON.stringify(stored));
    configMaps.set(key, bytes);
    if (warnings.length > 0) res.setHeader('Warning', warnings);
    answer(res, 201, bytes);
    seats--;
  });
}

function handle(req: IncomingMessage, res: ServerResponse): void {
  const user = identity(req);
  if (user === undefined) {
    status(res, 401, 'Unauthorized', 'Unauthorized');
    return;
  }
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const info = parseRequestInfo(req.method ?? 'GET', q < 0 ? url : url.slice(0, q), false);
  if (!allowed(user, info.verb, info.namespace, info.resource)) {
    status(res, 403, 'Forbidden', 'forbidden');
    return;
  }
  if (seats >= SEAT_LIMIT) {
    status(res, 429, 'TooManyRequests', 'Too many requests, please try again later.');
    return;
  }
  seats++;
  if (info.resource === 'configmaps' && info.name !== '' && info.verb === 'get') {
    const bytes = configMaps.get(`${info.namespace}/${info.name}`);
    if (bytes) answer(res, 200, bytes);
    else status(res, 404, 'NotFound', `configmaps "${info.name}" not found`);
    seats--;
    return;
  }
  if (info.resource === 'configmaps' && info.name === '' && info.verb === 'create') {
    create(req, res, info.namespace);
    return;
  }
  if (info.resource === 'namespaces' && info.verb === 'create') {
    // Fixtures only: the bench's namespaces, named by the body.
    void readBody(req).then((text) => {
      const name = ((JSON.parse(text) as { metadata: { name: string } }).metadata ?? {}).name;
      namespaces.add(name);
      answer(res, 201, Buffer.from(text));
      seats--;
    });
    return;
  }
  // Readiness probes and anything else the fixtures ask: found, empty.
  answer(res, 200, Buffer.from('{}'));
  seats--;
}

const server = baselineServer(certFile!, keyFile!, caFile!, handle);
server.listen(Number(port), '127.0.0.1', () => {
  serveCommands({ stored: () => configMaps.size });
});
