// Read access to objects held by a backend, for gateway components that
// need them (service-account and bootstrap-token lookups, later RBAC and the
// Node graph). In-process the core backend implements it over its store;
// with a remote core backend it is list+watch over HTTP. Read-only: writes
// belong to the backend's own controllers.
import type { KObject } from './meta.js';

export interface ObjectEvent {
  readonly type: 'ADDED' | 'MODIFIED' | 'DELETED';
  readonly object: KObject;
}

export interface ObjectWatch {
  stop(): void;
}

export interface ObjectSource {
  /** The current object, or undefined. */
  get(group: string, resource: string, namespace: string, name: string): Promise<KObject | undefined>;
  /**
   * The object as the source's cache holds it, read live only when the cache lacks it
   * (kube's informer-backed getters): for credential lookups on every request, where a
   * change made through another process counts after the cache's lag (milliseconds).
   * A source without a cache reads live.
   */
  lookup(group: string, resource: string, namespace: string, name: string): Promise<KObject | undefined>;
  /** All objects of a type (in one namespace when given) and the revision they were read at. */
  list(group: string, resource: string, namespace?: string): Promise<{ items: KObject[]; resourceVersion: string }>;
  /** Changes after resourceVersion, in order; onError when the feed ends (re-list then). */
  watch(group: string, resource: string, resourceVersion: string, onEvent: (ev: ObjectEvent) => void, onError: (err: Error) => void): ObjectWatch;
}
