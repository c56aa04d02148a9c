// kube-controller-manager's csrapproving: a node's client certificate request
// (signer kube-apiserver-client-kubelet, subject and usages of a node client)
// is approved with reason AutoApproved when its requester may create
// certificatesigningrequests/selfnodeclient (renewal: the requester is the node
// the subject names) or /nodeclient (first join, a bootstrap token) — asked of
// the front door's authorizers as kube asks with a SubjectAccessReview.
// Anything else is left for a person or another approver.
import type { AuthorizationAttributes } from '../../../lib/api/authorization.js';
import { isPlainObject, rfc3339, type KObject, type UserInfo } from '../../../lib/api/meta.js';
import { certificateOf, hasCondition } from '../../../lib/certificates/conditions.js';
import { parseCsrBase64 } from '../../../lib/certificates/csr.js';
import { KUBELET_CLIENT, kubeletClientProblem } from '../../../lib/certificates/signerrules.js';
import type { CoreEnv } from '../env.js';
import type { StoreEvent } from '../store/types.js';
import { csrPrefix, listCsrs, writeCsrStatus } from './csrs.js';
import { WatchingController } from './loop.js';

const RETRY_WITHOUT_AUTHORIZER_MS = 1000;

const RECOGNIZERS = [
  { subresource: 'selfnodeclient', self: true, message: 'Auto approving self kubelet client certificate after SubjectAccessReview.' },
  { subresource: 'nodeclient', self: false, message: 'Auto approving kubelet client certificate after SubjectAccessReview.' },
] as const;

function undecided(csr: KObject): boolean {
  return certificateOf(csr) === '' && !hasCondition(csr, 'Approved') && !hasCondition(csr, 'Denied');
}

/** A kubelet client request nobody decided yet (its subject and usages are checked when handled). */
function isNodeClientCandidate(csr: KObject): boolean {
  return isPlainObject(csr['spec']) && csr['spec']['signerName'] === KUBELET_CLIENT && undecided(csr);
}

/** The requester as the request records it (spec.username, uid, groups, extra). */
function requesterOf(spec: Record<string, unknown>): UserInfo {
  const extra = new Map<string, string[]>();
  if (isPlainObject(spec['extra'])) {
    for (const [k, v] of Object.entries(spec['extra'])) if (Array.isArray(v)) extra.set(k, v.map(String));
  }
  return {
    username: String(spec['username'] ?? ''),
    ...(typeof spec['uid'] === 'string' ? { uid: spec['uid'] } : {}),
    groups: Array.isArray(spec['groups']) ? spec['groups'].map(String) : [],
    ...(extra.size ? { extra: Object.fromEntries(extra) } : {}),
  };
}

export class CsrApprovingController extends WatchingController {
  constructor(env: CoreEnv) {
    super(env, 'csrapproving', [csrPrefix(env)]);
  }

  protected async pass(): Promise<number | undefined> {
    if (!this.env.admission?.authorizer) return this.env.clock() + RETRY_WITHOUT_AUTHORIZER_MS;
    for (const csr of await listCsrs(this.env)) await this.handle(csr);
    return undefined;
  }

  /** A change looks at that one request; a full pass runs only at start and after a broken watch. */
  protected override onEvent(ev: StoreEvent): void {
    if (ev.type === 'DELETED' || !isNodeClientCandidate(ev.object)) return;
    if (!this.env.admission?.authorizer) return this.requestPass();
    this.enqueue(`approve ${ev.object.metadata.name ?? ''}`, () => this.handle(ev.object));
  }

  private async handle(csr: KObject): Promise<void> {
    const authorizer = this.env.admission?.authorizer;
    if (!authorizer || !isNodeClientCandidate(csr)) return;
    const spec = isPlainObject(csr['spec']) ? csr['spec'] : {};
    let cn: string;
    try {
      const parsed = parseCsrBase64(String(spec['request'] ?? ''));
      const usages = Array.isArray(spec['usages']) ? spec['usages'].map(String) : [];
      if (kubeletClientProblem(parsed, usages) !== undefined) return;
      cn = parsed.commonName;
    } catch {
      return;
    }
    const user = requesterOf(spec);
    for (const r of RECOGNIZERS) {
      if (r.self && user.username !== cn) continue;
      const attrs: AuthorizationAttributes = {
        user,
        verb: 'create',
        isResourceRequest: true,
        path: '',
        apiGroup: 'certificates.k8s.io',
        apiVersion: '*',
        namespace: '',
        resource: 'certificatesigningrequests',
        subresource: r.subresource,
        name: '',
      };
      if ((await authorizer.authorize(attrs)).kind !== 'allow') continue;
      await writeCsrStatus(this.env, csr, 'approval', undecided, (s) => ({
        ...s,
        conditions: [
          ...(Array.isArray(s['conditions']) ? s['conditions'] : []),
          { type: 'Approved', status: 'True', reason: 'AutoApproved', message: r.message, lastUpdateTime: rfc3339(this.env.clock()) },
        ],
      }));
      this.env.log(`csrapproving: approved ${csr.metadata.name ?? ''} (${r.subresource})`);
      return;
    }
  }
}
