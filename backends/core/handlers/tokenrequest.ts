// POST /api/v1/namespaces/<ns>/serviceaccounts/<name>/token: the TokenRequest
// subresource (authentication.k8s.io/v1), as kube-apiserver's TokenREST
// answers it. Signs a bound token for the service account: audiences (default
// the API audiences), expirationSeconds (default 1h, at least 10m, capped by
// --service-account-max-token-expiration), and an optional bound Pod, Secret
// or Node that must exist (and match the given uid).
import { randomUUID } from 'node:crypto';
import type { BackendRequest } from '../../../lib/api/backend.js';
import { isPlainObject, rfc3339, type KObject } from '../../../lib/api/meta.js';
import { badRequest, cause, conflict, invalid, notFound, type StatusCause } from '../../../lib/api/status.js';
import { decodeObject, readBody } from '../../../lib/http/body.js';
import { negotiateInput, negotiateOutput, RESOURCE_AS } from '../../../lib/http/negotiate.js';
import { sendObject, wantsPretty } from '../../../lib/http/respond.js';
import { boundClaims, type ObjectRef } from '../../../lib/serviceaccount/claims.js';
import type { TokenSigner } from '../../../lib/serviceaccount/signer.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { objectKey } from '../keys.js';
import { storeCall } from '../storeerrors.js';
import { parseDryRun } from './params.js';
import { admissionAttributes, asAdmitted } from '../admission/attributes.js';
import { mutate, validate } from '../admission/run.js';

/** How the core backend issues service-account tokens (built once at start). */
export interface TokenIssuing {
  readonly signer: TokenSigner;
  /** The first --service-account-issuer: the `iss` of every new token. */
  readonly issuer: string;
  readonly apiAudiences: readonly string[];
  /** --service-account-max-token-expiration in seconds; undefined = no cap. */
  readonly maxExpirationSeconds: number | undefined;
}

const API_VERSION = 'authentication.k8s.io/v1';
const KIND = 'TokenRequest';
const GK = { group: 'authentication.k8s.io', kind: KIND };
const GVK = { ...GK, version: 'v1' };
const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;
const BINDABLE: Readonly<Record<string, string>> = { Pod: 'pods', Secret: 'secrets', Node: 'nodes' };

interface Spec {
  audiences: string[];
  expirationSeconds: number;
  boundObjectRef?: { kind: string; apiVersion: string; name: string; uid: string };
}

function readSpec(body: Record<string, unknown>, name: string, defaults: readonly string[]): Spec {
  if (body['apiVersion'] !== undefined && body['apiVersion'] !== API_VERSION) {
    throw badRequest(`the API version in the data (${String(body['apiVersion'])}) does not match the expected API version (${API_VERSION})`);
  }
  if (body['kind'] !== undefined && body['kind'] !== KIND)
    throw badRequest(`the kind in the data (${String(body['kind'])}) does not match the expected kind (${KIND})`);
  const spec = isPlainObject(body['spec']) ? body['spec'] : {};
  const causes: StatusCause[] = [];
  const rawAud = spec['audiences'] ?? [];
  let audiences: string[] = [];
  if (!Array.isArray(rawAud) || !rawAud.every((a) => typeof a === 'string' && a !== ''))
    causes.push(cause.invalid('spec.audiences', rawAud, 'must be a list of non-empty strings'));
  else audiences = rawAud as string[];
  const rawExp = spec['expirationSeconds'] ?? DEFAULT_EXPIRATION_SECONDS;
  const expirationSeconds = typeof rawExp === 'number' ? rawExp : typeof rawExp === 'string' && /^[0-9]+$/.test(rawExp) ? Number(rawExp) : NaN;
  if (!Number.isSafeInteger(expirationSeconds)) causes.push(cause.invalid('spec.expirationSeconds', rawExp, 'must be an integer'));
  else if (expirationSeconds < MIN_EXPIRATION_SECONDS)
    causes.push(cause.invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration less than 10 minutes'));
  else if (expirationSeconds > MAX_EXPIRATION_SECONDS)
    causes.push(cause.invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration larger than 2^32 seconds'));
  let boundObjectRef: Spec['boundObjectRef'];
  const ref = spec['boundObjectRef'];
  if (ref !== undefined && ref !== null) {
    if (!isPlainObject(ref)) causes.push(cause.invalid('spec.boundObjectRef', ref, 'must be an object'));
    else {
      const s = (k: string): string => (typeof ref[k] === 'string' ? (ref[k] as string) : '');
      boundObjectRef = { kind: s('kind'), apiVersion: s('apiVersion'), name: s('name'), uid: s('uid') };
      if (boundObjectRef.name === '') causes.push(cause.required('spec.boundObjectRef.name'));
    }
  }
  if (causes.length) throw invalid(GK, name, causes);
  return { audiences: audiences.length ? audiences : [...defaults], expirationSeconds, ...(boundObjectRef ? { boundObjectRef } : {}) };
}

async function getObject(env: CoreEnv, resource: string, namespace: string, name: string): Promise<KObject | undefined> {
  const t = env.registry.lookup('', 'v1', resource);
  if (!t) return undefined;
  return storeCall({ group: '', resource }, name, () => env.store.get(objectKey(t, namespace, name)));
}

export async function createToken(env: CoreEnv, issuing: TokenIssuing, t: ResourceType, r: BackendRequest): Promise<void> {
  const out = negotiateOutput(r.req.headers.accept, RESOURCE_AS, { protobuf: true, cbor: env.cbor }); // TokenRequest has a protobuf schema
  const dryRun = parseDryRun(r.query, 'CreateOptions');
  const decoded = decodeObject(r.body ?? (await readBody(r.req, env.bodyLimit)), negotiateInput(r.req.headers['content-type'], env.cbor));
  const { namespace, name } = r.info;
  const admitted = (object: KObject) => admissionAttributes(t, r, { operation: 'CREATE', object, oldObject: undefined, dryRun, kind: GVK });
  const body = (await mutate(env, admitted(asAdmitted(decoded)))) ?? decoded;
  const spec = readSpec(body, name, issuing.apiAudiences);

  const sa = await getObject(env, t.plural, namespace, name);
  if (!sa) throw notFound({ group: '', resource: 'serviceaccounts' }, name);
  // Validating admission on the defaulted request, before the bound object is looked up, as kube's TokenREST.
  await validate(env, admitted({ apiVersion: API_VERSION, kind: KIND, metadata: { name, namespace }, spec }));
  let pod: ObjectRef | undefined;
  let secret: ObjectRef | undefined;
  let node: ObjectRef | undefined;
  const ref = spec.boundObjectRef;
  if (ref) {
    const resource = BINDABLE[ref.kind];
    if (!resource || (ref.apiVersion !== 'v1' && ref.apiVersion !== '')) {
      throw badRequest(`cannot bind token for serviceaccount "${name}" to object of type ${ref.apiVersion || 'v1'}, Kind=${ref.kind}`);
    }
    const obj = await getObject(env, resource, resource === 'nodes' ? '' : namespace, ref.name);
    if (!obj) throw notFound({ group: '', resource }, ref.name);
    const uid = obj.metadata.uid ?? '';
    if (ref.uid !== '' && ref.uid !== uid) {
      throw conflict(
        { group: '', resource: ref.kind },
        ref.name,
        `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
    const boundTo = { name: ref.name, uid };
    if (ref.kind === 'Pod') {
      pod = boundTo;
      const podSpec = isPlainObject(obj['spec']) ? obj['spec'] : {};
      const podSa = typeof podSpec['serviceAccountName'] === 'string' && podSpec['serviceAccountName'] !== '' ? podSpec['serviceAccountName'] : 'default';
      if (podSa !== name) throw badRequest(`cannot bind token for serviceaccount "${name}" to pod "${ref.name}" which uses serviceaccount "${podSa}"`);
      const nodeName = podSpec['nodeName'];
      if (typeof nodeName === 'string' && nodeName !== '') {
        const n = await getObject(env, 'nodes', '', nodeName);
        if (n?.metadata.uid) node = { name: nodeName, uid: n.metadata.uid };
      }
    } else if (ref.kind === 'Secret') secret = boundTo;
    else node = boundTo;
  }

  const expirationSeconds =
    issuing.maxExpirationSeconds !== undefined ? Math.min(spec.expirationSeconds, issuing.maxExpirationSeconds) : spec.expirationSeconds;
  const now = env.clock();
  const claims = boundClaims({
    issuer: issuing.issuer,
    audiences: spec.audiences,
    now,
    expirationSeconds,
    jti: randomUUID(),
    namespace,
    serviceAccount: { name, uid: sa.metadata.uid ?? '' },
    pod,
    secret,
    node,
  });
  const token = dryRun ? '' : await issuing.signer.sign(claims);
  const result = {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name, namespace, creationTimestamp: rfc3339(now) },
    spec: {
      audiences: spec.audiences,
      expirationSeconds,
      boundObjectRef: ref ? { kind: ref.kind, apiVersion: 'v1', name: ref.name, uid: ref.uid || (pod ?? secret ?? node)!.uid } : null,
    },
    status: { token, expirationTimestamp: rfc3339((claims['exp'] as number) * 1000) },
  };
  sendObject(r, 201, result, out, wantsPretty(r.req, r.query));
}
