// A server-side apply that finds no object creates one, so, as in
// kube-apiserver, it needs the `create` permission besides the `patch` it
// was authorized with.
import type { ObjectSource } from '../../lib/api/objectsource.js';
import { forbiddenMessage } from '../../lib/api/status.js';
import { patchTypeOf } from '../../lib/patch/types.js';
import type { RegistrySource } from '../../lib/registry/live.js';
import { forbiddenMessage as denial } from '../authz/chain.js';
import type { Attributes, Authorizer } from '../authz/types.js';
import type { AdmissionPlugin } from '../pipeline/admission.js';

export interface ApplyCreateOptions {
  readonly authorizer: Authorizer;
  readonly objects: ObjectSource;
  /** Types whose objects `objects` can read (the in-process core backend's). */
  readonly registry: RegistrySource;
}

export function applyCreateAuthorization(opts: ApplyCreateOptions): AdmissionPlugin {
  return {
    name: 'ApplyCreateAuthorization',
    async admit(ctx) {
      const i = ctx.info;
      if (i.verb !== 'patch' || i.subresource || patchTypeOf(ctx.req.headers['content-type']) !== 'apply') return;
      if (!opts.registry.current.lookup(i.apiGroup, i.apiVersion, i.resource)) return;
      if (await opts.objects.get(i.apiGroup, i.resource, i.namespace, i.name)) return;
      const attrs: Attributes = {
        user: ctx.user,
        verb: 'create',
        isResourceRequest: true,
        path: i.path,
        apiGroup: i.apiGroup,
        apiVersion: i.apiVersion,
        namespace: i.namespace,
        resource: i.resource,
        subresource: '',
        name: i.name,
      };
      const d = await opts.authorizer.authorize(attrs);
      if (d.kind === 'allow') return;
      throw forbiddenMessage(d.reason ? `${denial(attrs)}: ${d.reason}` : denial(attrs), { name: i.name, group: i.apiGroup, kind: i.resource });
    },
  };
}
