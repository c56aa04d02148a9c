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
import { parseCsr } from '../../../lib/certificates/csr.js';
import { KUBELET_CLIENT, kubeletClientProblem } from '../../../lib/certificates/signerrules.js';
import type { CoreEnv } from '../env.js';
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
    const authorizer = this.env.admission?.authorizer;
    if (!authorizer) return this.env.clock() + RETRY_WITHOUT_AUTHORIZER_MS;
    for (const csr of await listCsrs(this.env)) {
      const spec = isPlainObject(csr['spec']) ? csr['spec'] : {};
      if (spec['signerName'] !== KUBELET_CLIENT || !undecided(csr)) continue;
      let cn: string;
      try {
        const parsed = parseCsr(Buffer.from(String(spec['request'] ?? ''), 'base64'));
        const usages = Array.isArray(spec['usages']) ? spec['usages'].map(String) : [];
        if (kubeletClientProblem(parsed, usages) !== undefined) continue;
        cn = parsed.commonName;
      } catch {
        continue;
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
        break;
      }
    }
    return undefined;
  }
}
