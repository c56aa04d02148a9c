// The admission interface of the core backend's write path, after kube's
// admission.Attributes and its two plugin kinds. Every write runs one
// sequence (run.ts): mutating plugins on the object the write produced,
// then defaulting and schema validation, then validating plugins on the
// object the store will keep, then the store.
import type { RequestAuthorizer } from '../../../lib/api/authorization.js';
import type { KObject, UserInfo } from '../../../lib/api/meta.js';
import type { CoreEnv } from '../env.js';
import type { DeleteOptions } from '../handlers/params.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionKind {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
}

export interface GroupVersionResource {
  readonly group: string;
  readonly version: string;
  readonly resource: string;
}

/** The options of the request that writes (kube's CreateOptions, UpdateOptions, PatchOptions, DeleteOptions). */
export interface WriteOptions {
  /** A PATCH that creates (server-side apply of a missing object) keeps PatchOptions. */
  readonly kind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions';
  readonly fieldManager?: string;
  /** The DeleteOptions of a delete. */
  readonly delete?: DeleteOptions;
}

export interface AdmissionAttributes {
  readonly operation: Operation;
  /**
   * CREATE and UPDATE: the object as the store will keep it (mutating plugins
   * see it before defaulting and validation); DELETE: undefined. For the
   * scale subresource the Scale, for serviceaccounts/token the TokenRequest.
   */
  readonly object: KObject | undefined;
  /** UPDATE and DELETE: the stored object (an update reads it in the request's version); CREATE: undefined. */
  readonly oldObject: KObject | undefined;
  readonly kind: GroupVersionKind;
  readonly resource: GroupVersionResource;
  readonly subresource: string;
  readonly namespace: string;
  /** The object's name (a generated name once it is known). */
  readonly name: string;
  /** The effective user (after impersonation). */
  readonly user: UserInfo;
  readonly dryRun: boolean;
  readonly options: WriteOptions;
  /** Adds a Warning header to the response (webhooks' warnings); absent = not answering a client. */
  readonly warn?: (text: string) => void;
  /** Adds an annotation to the request's audit event; absent = not audited. */
  readonly annotate?: (key: string, value: string, level?: 'Request') => void;
  /** The request whose `excludedMs` the webhooks' round trips add to (left out of its SLI latency); absent = not answering a client. */
  readonly timing?: { excludedMs?: number };
}

/*
 * Both kinds answer synchronously when the write is not theirs (a plain
 * method, not an async one, that returns at its first check): the runner
 * awaits only a promise, so a plugin that does not apply costs one call and
 * a write no plugin waits on takes no promise turn for admission. A plugin
 * returns a promise only once it has something to wait for (a store read, an
 * authorizer, a webhook call).
 */

/** May change the object (returns the new one, or undefined to keep it); refuses with a StatusError. */
export interface MutatingPlugin {
  readonly name: string;
  admit(a: AdmissionAttributes, env: CoreEnv): KObject | undefined | Promise<KObject | undefined>;
}

/** May only refuse, with a StatusError (thrown, or the promise's rejection). `env` is the request's view of the backend (its store calls are the request's spans). */
export interface ValidatingPlugin {
  readonly name: string;
  validate(a: AdmissionAttributes, env: CoreEnv): void | Promise<void>;
}

/** The plugins of one backend, in the order they run. */
export interface Admission {
  readonly mutating: readonly MutatingPlugin[];
  readonly validating: readonly ValidatingPlugin[];
  /** The front door's authorizers the plugins ask; the csrapproving controller's SubjectAccessReviews too. */
  readonly authorizer?: RequestAuthorizer;
}
