// kube's three certificates admission plugins, on for every server:
// CertificateApproval (/approval needs `approve` on the request's signer),
// CertificateSigning (a /status write that changes status.certificate needs
// `sign` on it) and CertificateSubjectRestriction (no kube-apiserver-client
// request for the group system:masters).
import type { RequestAuthorizer } from '../../../lib/api/authorization.js';
import { isPlainObject, type KObject } from '../../../lib/api/meta.js';
import { forbidden } from '../../../lib/api/status.js';
import { parseCsrBase64 } from '../../../lib/certificates/csr.js';
import { certificateOf } from '../../../lib/certificates/conditions.js';
import { authorizedForSigner, CSR_GROUP, CSR_RESOURCE } from './signerauthz.js';
import type { AdmissionAttributes, ValidatingPlugin } from './types.js';

const GR = { group: CSR_GROUP, resource: CSR_RESOURCE };
const KUBE_APISERVER_CLIENT = 'kubernetes.io/kube-apiserver-client';

function isCsr(a: AdmissionAttributes): boolean {
  return a.resource.group === CSR_GROUP && a.resource.resource === CSR_RESOURCE;
}

function signerOf(o: KObject | undefined): string {
  const spec = o?.['spec'];
  return isPlainObject(spec) && typeof spec['signerName'] === 'string' ? spec['signerName'] : '';
}

async function requireSigner(authorizer: RequestAuthorizer, a: AdmissionAttributes, verb: 'approve' | 'sign', signer: string): Promise<void> {
  if (!(await authorizedForSigner(authorizer, a.user, verb, signer))) {
    throw forbidden(GR, a.name, `user not permitted to ${verb} requests with signerName "${signer}"`);
  }
}

export function certificateApproval(authorizer: RequestAuthorizer): ValidatingPlugin {
  return {
    name: 'CertificateApproval',
    // Not async: a write that is not an approval returns at once, without a promise turn (run.ts).
    validate(a) {
      if (a.operation !== 'UPDATE' || a.subresource !== 'approval' || !isCsr(a)) return;
      return requireSigner(authorizer, a, 'approve', signerOf(a.object));
    },
  };
}

export function certificateSigning(authorizer: RequestAuthorizer): ValidatingPlugin {
  return {
    name: 'CertificateSigning',
    validate(a) {
      if (a.operation !== 'UPDATE' || a.subresource !== 'status' || !isCsr(a) || !a.object || !a.oldObject) return;
      if (certificateOf(a.object) === certificateOf(a.oldObject)) return;
      return requireSigner(authorizer, a, 'sign', signerOf(a.oldObject));
    },
  };
}

export const certificateSubjectRestriction: ValidatingPlugin = {
  name: 'CertificateSubjectRestriction',
  validate(a) {
    if (a.operation !== 'CREATE' || a.subresource !== '' || !isCsr(a) || signerOf(a.object) !== KUBE_APISERVER_CLIENT) return;
    const spec = a.object?.['spec'];
    const request = isPlainObject(spec) && typeof spec['request'] === 'string' ? spec['request'] : '';
    let organizations: readonly string[];
    try {
      organizations = parseCsrBase64(request).organizations;
    } catch (err) {
      throw forbidden(GR, a.name, `failed to parse CSR: ${(err as Error).message}`);
    }
    if (organizations.includes('system:masters')) {
      throw forbidden(GR, a.name, 'use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed');
    }
  },
};
