// Consults authorizers in order; the first allow or deny decides; when all
// have no opinion the request is denied. As kube's union authorizer, the
// errors of the authorizers that had no opinion are kept with that answer
// (the deciding one's own error goes with its decision), so the pipeline
// can answer 500 for a request that only failed authorizers could decide.
import { spanAttribute, type Trace } from '../../lib/tracing/span.js';
import type { Attributes, Authorizer, Decision } from './types.js';

/**
 * kube's union of decisions, fed one authorizer's decision at a time: the
 * first allow or deny decides; otherwise "no opinion" with the reasons and
 * errors met. The chain and its explanation (explain.ts) both use it.
 */
export class Union {
  // Made at the first reason or error: a request the first authorizer decides allocates neither.
  private reasons: string[] | undefined;
  private errors: string[] | undefined;
  private decided: Decision | undefined;

  /** Takes the next decision; true when it decides (later authorizers are not asked). */
  add(d: Decision): boolean {
    if (d.kind !== 'no-opinion') {
      this.decided = d;
      return true;
    }
    if (d.reason) (this.reasons ??= []).push(d.reason);
    if (d.error) (this.errors ??= []).push(d.error);
    return false;
  }

  result(): Decision {
    if (this.decided) return this.decided;
    const reason = this.reasons ? this.reasons.join('; ') : '';
    return this.errors ? { kind: 'no-opinion', reason, error: this.errors.join('; ') } : { kind: 'no-opinion', reason };
  }
}

// kube-apiserver adds nothing to the Forbidden message when no authorizer gave a reason.
const NOBODY_ALLOWED: Decision = Object.freeze({ kind: 'deny', reason: '' });

export class AuthorizerChain implements Authorizer {
  readonly name = 'chain';
  readonly delegates = true;
  constructor(private readonly authorizers: readonly Authorizer[]) {}

  /** The decision itself when every authorizer asked answered at once: a request takes no promise turn for it. */
  authorize(attrs: Attributes, trace?: Trace): Decision | Promise<Decision> {
    const d = this.evaluate(attrs, trace);
    return d instanceof Promise ? d.then(denyUndecided) : denyUndecided(d);
  }

  /** The chain's own answer, keeping "no opinion" (access reviews report `denied` only for a real deny); a promise only when an authorizer has to be waited on. */
  evaluate(attrs: Attributes, trace?: Trace): Decision | Promise<Decision> {
    const union = new Union();
    for (let i = 0; i < this.authorizers.length; i++) {
      const a = this.authorizers[i]!;
      let d: Decision | Promise<Decision>;
      try {
        d = a.authorize(attrs, trace);
      } catch (err) {
        return Promise.reject(err);
      }
      if (d instanceof Promise) return this.awaiting(attrs, trace, union, i, d);
      if (this.decides(union, a, d, trace)) break;
    }
    return union.result();
  }

  /** The rest of evaluate once authorizer `from` has to be waited on. */
  private async awaiting(attrs: Attributes, trace: Trace | undefined, union: Union, from: number, pending: Promise<Decision>): Promise<Decision> {
    for (let i = from; i < this.authorizers.length; i++) {
      const a = this.authorizers[i]!;
      if (this.decides(union, a, await (i === from ? pending : a.authorize(attrs, trace)), trace)) break;
    }
    return union.result();
  }

  private decides(union: Union, a: Authorizer, d: Decision, trace: Trace | undefined): boolean {
    if (!union.add(d)) return false;
    // The authorizer that decided, named once on the trace (a nested chain named its own).
    if (a.delegates !== true) spanAttribute(trace, 'authorization.authorizer', a.name);
    return true;
  }
}

/** The chain's answer to a request: "no opinion" from every authorizer is a deny. */
function denyUndecided(d: Decision): Decision {
  if (d.kind !== 'no-opinion') return d;
  if (d.error) return { kind: 'deny', reason: d.reason, error: d.error };
  return d.reason ? { kind: 'deny', reason: d.reason } : NOBODY_ALLOWED;
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
