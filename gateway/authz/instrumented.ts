// Counts the terminal decisions of one configured authorizer
// (apiserver_authorization_decisions_total{type,name,decision}), as kube's
// instrumentedAuthorizer does; no-opinion is not a decision and is not counted.
import { recordDecision } from '../metrics/authz.js';
import type { Trace } from '../../lib/tracing/span.js';
import type { Attributes, Authorizer, Decision } from './types.js';

export function instrumented(type: string, name: string, inner: Authorizer): Authorizer {
  const count = (d: Decision): Decision => {
    if (d.kind === 'allow') recordDecision(type, name, 'allowed');
    else if (d.kind === 'deny') recordDecision(type, name, 'denied');
    return d;
  };
  return {
    name,
    authorize(a: Attributes, trace?: Trace): Decision | Promise<Decision> {
      const d = inner.authorize(a, trace);
      return d instanceof Promise ? d.then(count) : count(d);
    },
  };
}

/** Holds the current chain; a reload swaps the whole chain at once, so a request sees one configuration. */
export class SwappableAuthorizer implements Authorizer {
  readonly name = 'authorization-config';
  readonly delegates = true;
  constructor(private current: Authorizer) {}
  swap(next: Authorizer): Authorizer {
    const old = this.current;
    this.current = next;
    return old;
  }
  authorize(a: Attributes, trace?: Trace): Decision | Promise<Decision> {
    return this.current.authorize(a, trace);
  }
}
