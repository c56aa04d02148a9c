// Shapes shared by the gateway and the backends: objects, lists, users.
// Objects arriving from clients are untrusted JSON; these types describe what
// the server has validated or produced, never what a client sent.

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: OwnerReference[];
  managedFields?: unknown[];
  [field: string]: unknown;
}

/** A Kubernetes object as JSON. Objects returned by a Store are shared and must be treated as read-only. */
export interface KObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  [field: string]: unknown;
}

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

let lastSecond = NaN;
let lastText = '';

/** RFC 3339 with second precision, as Kubernetes writes timestamps (every write stamps one: the last second's text is kept). */
export function rfc3339(ms: number): string {
  const sec = Math.floor(ms / 1000);
  if (sec !== lastSecond) {
    lastText = new Date(sec * 1000).toISOString().replace('.000Z', 'Z');
    lastSecond = sec;
  }
  return lastText;
}
