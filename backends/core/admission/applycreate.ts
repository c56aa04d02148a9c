// A server-side apply that finds no object creates one, so, as in
// kube-apiserver, it needs the `create` permission besides the `patch` it
// was authorized with. It runs first among the validating plugins, as kube
// authorizes the create before its validating admission.
import type { AuthorizationAttributes, RequestAuthorizer } from '../../../lib/api/authorization.js';
import { resourceDenial } from '../../../lib/api/authorization.js';
import { forbiddenMessage } from '../../../lib/api/status.js';
import type { AdmissionAttributes, ValidatingPlugin } from './types.js';

export function applyCreateAuthorization(authorizer: RequestAuthorizer): ValidatingPlugin {
  return {
    name: 'ApplyCreateAuthorization',
    // Synchronous for every write but an apply that creates (run.ts awaits only a promise).
    validate(a) {
      if (a.operation !== 'CREATE' || a.options.kind !== 'PatchOptions' || a.subresource !== '') return;
      return authorizeCreate(authorizer, a);
    },
  };
}

async function authorizeCreate(authorizer: RequestAuthorizer, a: AdmissionAttributes): Promise<void> {
  const attrs: AuthorizationAttributes = {
    user: a.user,
    verb: 'create',
    isResourceRequest: true,
    path: '',
    apiGroup: a.resource.group,
    apiVersion: a.resource.version,
    namespace: a.namespace,
    resource: a.resource.resource,
    subresource: '',
    name: a.name,
  };
  const d = await authorizer.authorize(attrs);
  if (d.kind === 'allow') return;
  const denial = resourceDenial(attrs);
  throw forbiddenMessage(d.reason ? `${denial}: ${d.reason}` : denial, { name: a.name, group: a.resource.group, kind: a.resource.resource });
}
