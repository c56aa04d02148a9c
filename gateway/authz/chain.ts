// Consults authorizers in order; the first allow or deny decides; when all
// have no opinion the request is denied. As kube's union authorizer, the
// errors of the authorizers that had no opinion are kept with that answer
// (the deciding one's own error goes with its decision), so the pipeline
// can answer 500 for a request that only failed authorizers could decide.
import { spanAttribute } from '../../lib/tracing/span.js';
import type { Attributes, Authorizer, Decision } from './types.js';

// kube-apiserver adds nothing to the Forbidden message when no authorizer gave a reason.
const NOBODY_ALLOWED: Decision = Object.freeze({ kind: 'deny', reason: '' });

export class AuthorizerChain implements Authorizer {
  readonly name = 'chain';
  readonly delegates = true;
  constructor(private readonly authorizers: readonly Authorizer[]) {}

  async authorize(attrs: Attributes): Promise<Decision> {
    const d = await this.evaluate(attrs);
    if (d.kind !== 'no-opinion') return d;
    if (d.error) return { kind: 'deny', reason: d.reason, error: d.error };
    return d.reason ? { kind: 'deny', reason: d.reason } : NOBODY_ALLOWED;
  }

  /** The chain's own answer, keeping "no opinion" (access reviews report `denied` only for a real deny). */
  async evaluate(attrs: Attributes): Promise<Decision> {
    const reasons: string[] = [];
    const errors: string[] = [];
    for (const a of this.authorizers) {
      const d = await a.authorize(attrs);
      if (d.kind !== 'no-opinion') {
        // The authorizer that decided, named once (a nested chain named its own).
        if (a.delegates !== true) spanAttribute('authorization.authorizer', a.name);
        return d;
      }
      if (d.reason) reasons.push(d.reason);
      if (d.error) errors.push(d.error);
    }
    const reason = reasons.join('; ');
    return errors.length > 0 ? { kind: 'no-opinion', reason, error: errors.join('; ') } : { kind: 'no-opinion', reason };
  }
}

/** kube-apiserver's wording for a denial. */
export function forbiddenMessage(a: Attributes): string {
  const who = `User "${a.user.username}"`;
  if (!a.isResourceRequest) return `forbidden: ${who} cannot ${a.verb} path "${a.path}"`;
  const res = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const subject = `${a.apiGroup ? `${a.resource}.${a.apiGroup}` : a.resource}${a.name ? ` "${a.name}"` : ''}`;
  const scope = a.namespace ? `in the namespace "${a.namespace}"` : 'at the cluster scope';
  return `${subject} is forbidden: ${who} cannot ${a.verb} resource "${res}" in API group "${a.apiGroup}" ${scope}`;
}
