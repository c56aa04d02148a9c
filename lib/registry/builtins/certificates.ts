// certificates.k8s.io/v1: CertificateSigningRequests. The requester's identity
// is the server's (spec.username, uid, groups, extra); the spec never changes
// after create; /approval changes only the conditions, /status everything in
// status but the Approved and Denied conditions (kube's three strategies).
import type { KObject, UserInfo } from '../../api/meta.js';
import { isPlainObject } from '../../api/meta.js';
import { cause, invalid } from '../../api/status.js';
import { conditionsOf, stampConditions } from '../../certificates/conditions.js';
import { prepareCsrBase64 } from '../../certificates/csr.js';
import { humanDuration } from '../columns.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { str } from '../fields.js';
import { ALL_VERBS, type ResourceType } from '../types.js';
import { validateCsr } from './certificates-validation.js';

const GK = { group: 'certificates.k8s.io', kind: 'CertificateSigningRequest' };

/** kube's extractCSRStatus: Denied over Approved over Pending, then Failed and Issued. */
function conditionCell(o: KObject): string {
  const types = new Set(conditionsOf(o).map((c) => c['type']));
  let s = types.has('Denied') ? 'Denied' : types.has('Approved') ? 'Approved' : 'Pending';
  if (types.has('Failed')) s += ',Failed';
  if (str(o, 'status', 'certificate') !== '') s += ',Issued';
  return s;
}

function requestedDuration(o: KObject): string {
  const spec = o['spec'];
  const e = isPlainObject(spec) ? spec['expirationSeconds'] : undefined;
  return typeof e === 'number' ? humanDuration(e * 1000) : '<none>';
}

function setRequester(obj: KObject, user: UserInfo | undefined): void {
  const spec: Record<string, unknown> = isPlainObject(obj['spec']) ? { ...obj['spec'] } : {};
  for (const f of ['username', 'uid', 'groups', 'extra']) delete spec[f];
  if (user) {
    if (user.username) spec['username'] = user.username;
    if (user.uid) spec['uid'] = user.uid;
    if (user.groups.length) spec['groups'] = [...user.groups];
    // fromEntries defines own properties: a `__proto__` key stays a key.
    const extra = user.extra ? Object.entries(user.extra) : [];
    if (extra.length) spec['extra'] = Object.fromEntries(extra.map(([k, v]) => [k, [...v]]));
  }
  obj['spec'] = spec;
  // Nobody creates a pre-approved or pre-issued request.
  obj['status'] = {};
}

/**
 * A create's request parsed where a promise may be awaited, so that its key is
 * imported the cheaper asynchronous way; validation and admission then find
 * the parse remembered. An update keeps the stored spec, checked on create.
 */
async function prevalidate(obj: KObject, old: KObject | undefined): Promise<void> {
  if (old) return;
  const spec = obj['spec'];
  const request = isPlainObject(spec) ? spec['request'] : undefined;
  if (typeof request === 'string' && request !== '') await prepareCsrBase64(request);
}

const APPROVAL_TYPES = ['Approved', 'Denied'] as const;

/** /status keeps the stored Approved and Denied conditions; adding one there is refused, as kube's validation does. */
function keepApprovals(next: KObject, old: KObject): void {
  const status: Record<string, unknown> = isPlainObject(next['status']) ? { ...next['status'] } : {};
  const conditions = conditionsOf(next);
  for (const type of APPROVAL_TYPES) {
    const before = conditionsOf(old).filter((c) => c['type'] === type);
    const now = conditions.filter((c) => c['type'] === type);
    if (now.length > before.length) {
      throw invalid(GK, old.metadata.name ?? '', [cause.forbidden('status.conditions', `updates may not add a condition of type "${type}"`)]);
    }
    if (now.length === before.length) now.forEach((c, i) => (conditions[conditions.indexOf(c)] = before[i]!));
  }
  status['conditions'] = conditions;
  if (conditions.length === 0) delete status['conditions'];
  next['status'] = status;
}

function prepareForUpdate(next: KObject, old: KObject, target: string, now: number): void {
  next['spec'] = old['spec'];
  if (target === 'approval') {
    const oldStatus = isPlainObject(old['status']) ? old['status'] : {};
    const conditions = isPlainObject(next['status']) ? next['status']['conditions'] : undefined;
    const status: Record<string, unknown> = { ...oldStatus };
    if (conditions === undefined || conditions === null) delete status['conditions'];
    else status['conditions'] = conditions;
    next['status'] = status;
  } else if (target === 'status') {
    keepApprovals(next, old);
  }
  stampConditions(next, old, now);
}

export const certificateSigningRequests: ResourceType = {
  group: 'certificates.k8s.io',
  version: 'v1',
  kind: 'CertificateSigningRequest',
  listKind: 'CertificateSigningRequestList',
  plural: 'certificatesigningrequests',
  singular: 'certificatesigningrequest',
  namespaced: false,
  shortNames: ['csr'],
  categories: [],
  verbs: ALL_VERBS,
  subresources: [
    { name: 'approval', kind: 'CertificateSigningRequest', verbs: ['get', 'patch', 'update'] },
    { name: 'status', kind: 'CertificateSigningRequest', verbs: ['get', 'patch', 'update'] },
  ],
  // kube accepts any name that is a valid path segment.
  nameRule: 'path-segment',
  createOnUpdate: false,
  columns: [
    nameColumn(),
    ageColumn(),
    column(
      'SignerName',
      'Requested signer for the request. It is a qualified name in the form: `scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it\'s a kubelet client certificate, it is assigned\n    "kubernetes.io/kube-apiserver-client-kubelet".\n 2. If it\'s a kubelet serving certificate, it is assigned\n    "kubernetes.io/kubelet-serving".\n 3. Otherwise, it is assigned "kubernetes.io/legacy-unknown".\nDistribution of trust for signers happens out of band. You can select on this field using `spec.signerName`.',
      (o) => str(o, 'spec', 'signerName') || '<none>',
    ),
    column('Requestor', 'Base64-encoded PKCS#10 CSR data', (o) => str(o, 'spec', 'username')),
    column(
      'RequestedDuration',
      'expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes signers will honor this field as long as the requested duration is not greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various reasons:\n\n  1. Old signer that is unaware of the field (such as the in-tree\n     implementations prior to v1.22)\n  2. Signer whose configured maximum is shorter than the requested duration\n  3. Signer whose configured minimum is longer than the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes.',
      requestedDuration,
    ),
    column('Condition', 'Conditions applied to the request, such as approval or denial.', conditionCell),
  ],
  fieldSelectors: { 'spec.signerName': (o) => str(o, 'spec', 'signerName') },
  prepareForCreate: setRequester,
  prepareForUpdate,
  prevalidate,
  validate: validateCsr,
};

export const CERTIFICATES_TYPES: readonly ResourceType[] = [certificateSigningRequests];
