// The authorizers too costly to make per chain: the Node graph (a list and
// watch of every pod and volume) and RBAC (its policy, read by the composition
// root). Made on first use, then shared by every chain a start or a reload of
// --authorization-config builds.
import type { ObjectSource } from '../../lib/api/objectsource.js';
import type { Authorizer } from './types.js';
import { startNodeAuthorization, type NodeAuthorization } from './node/index.js';

export interface SharedAuthorizerSources {
  readonly objects: ObjectSource;
  readonly log: (msg: string) => void;
  /** AuthorizeNodeWithSelectors, in effect only with AuthorizeWithSelectors. */
  readonly nodeWithSelectors: boolean;
  /** The RBAC authorizer; asked at most once. Absent: RBAC cannot be configured. */
  readonly rbac: (() => Authorizer | Promise<Authorizer>) | undefined;
}

export class SharedAuthorizers {
  private nodeAuthz: Promise<NodeAuthorization> | undefined;
  private rbacAuthz: Promise<Authorizer> | undefined;

  constructor(private readonly from: SharedAuthorizerSources) {}

  async node(): Promise<Authorizer> {
    this.nodeAuthz ??= startNodeAuthorization(this.from.objects, { withSelectors: this.from.nodeWithSelectors, log: this.from.log });
    return (await this.nodeAuthz).authorizer;
  }

  /** undefined when no RBAC authorizer was given. */
  rbac(): Promise<Authorizer> | undefined {
    const make = this.from.rbac;
    if (!make) return undefined;
    this.rbacAuthz ??= Promise.resolve(make());
    return this.rbacAuthz;
  }

  /** Stops the Node graph's watches; RBAC belongs to whoever made it. */
  close(): void {
    void this.nodeAuthz?.then(
      (n) => n.close(),
      () => undefined,
    );
  }
}
