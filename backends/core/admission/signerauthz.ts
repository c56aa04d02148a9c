// kube's IsAuthorizedForSignerName: may this user <verb> (approve, sign) requests
// for a signer? Asked of the front door's authorizers as a `signers` resource
// named by the signer, then by its domain wildcard (`example.com/*`).
import type { AuthorizationAttributes, RequestAuthorizer } from '../../../lib/api/authorization.js';
import type { UserInfo } from '../../../lib/api/meta.js';

export const CSR_GROUP = 'certificates.k8s.io';
export const CSR_RESOURCE = 'certificatesigningrequests';

function signerAttributes(user: UserInfo, verb: string, name: string): AuthorizationAttributes {
  return {
    user,
    verb,
    isResourceRequest: true,
    path: '',
    apiGroup: CSR_GROUP,
    apiVersion: '*',
    namespace: '',
    resource: 'signers',
    subresource: '',
    name,
  };
}

export async function authorizedForSigner(authorizer: RequestAuthorizer, user: UserInfo, verb: string, signerName: string): Promise<boolean> {
  if ((await authorizer.authorize(signerAttributes(user, verb, signerName))).kind === 'allow') return true;
  const domain = signerName.split('/')[0] ?? '';
  return (await authorizer.authorize(signerAttributes(user, verb, `${domain}/*`))).kind === 'allow';
}
