// The values admission expressions see (kube's admission/plugin/cel
// activation): the `request` variable as kube 1.33 binds the
// AdmissionRequest's JSON, `object`, `oldObject`, `params` and
// `namespaceObject` as unstructured content (converted lazily, member by
// member), and the `authorizer` variable of a request.
import type { CelInput } from '@bufbuild/cel';
import type { UserInfo } from '../api/meta.js';
import { authorizerValue } from './authz.js';

/** The request's parts the `request` variable shows (kube's AdmissionRequest). */
export interface AdmissionRequestInput {
  readonly kind: { readonly group: string; readonly version: string; readonly kind: string };
  readonly resource: { readonly group: string; readonly version: string; readonly resource: string };
  readonly subResource: string;
  readonly requestKind?: AdmissionRequestInput['kind'];
  readonly requestResource?: AdmissionRequestInput['resource'];
  readonly requestSubResource?: string;
  readonly name: string;
  readonly namespace: string;
  readonly operation: string;
  readonly userInfo: UserInfo;
  readonly dryRun: boolean;
  /** The write's options object (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions) as JSON, or null. */
  readonly options: unknown;
}

/** The `request` variable's value: JSON-shaped as kube serialises an AdmissionRequest (empty fields left out). */
export function requestValue(r: AdmissionRequestInput): CelInput {
  const u = r.userInfo;
  const user: Record<string, unknown> = { username: u.username };
  if (u.uid) user.uid = u.uid;
  if (u.groups?.length) user.groups = [...u.groups];
  if (u.extra && Object.keys(u.extra).length > 0) user.extra = u.extra;
  const req: Record<string, unknown> = {
    kind: { ...r.kind },
    resource: { ...r.resource },
    requestKind: { ...(r.requestKind ?? r.kind) },
    requestResource: { ...(r.requestResource ?? r.resource) },
    operation: r.operation,
    userInfo: user,
    dryRun: r.dryRun,
  };
  // kube 1.33 binds the AdmissionRequest's JSON: omitempty fields are absent (`has(request.namespace)`).
  if (r.name) req.name = r.name;
  if (r.namespace) req.namespace = r.namespace;
  if (r.subResource) req.subResource = r.subResource;
  const rs = r.requestSubResource ?? r.subResource;
  if (rs) req.requestSubResource = rs;
  if (r.options !== null && r.options !== undefined) req.options = r.options;
  return jsonValue(req);
}

/**
 * A JSON object as a CEL map, converted member by member when an expression
 * reads it (a policy reading `object.data` never converts `metadata.managedFields`).
 * Only own properties are members; `__proto__` is data.
 */
class JsonObjectMap extends Map<string, CelInput> {
  private readonly done = new Map<string, CelInput>();
  constructor(private readonly obj: Record<string, unknown>) {
    super();
  }
  override get(k: string): CelInput | undefined {
    if (typeof k !== 'string' || !Object.hasOwn(this.obj, k)) return undefined;
    let v = this.done.get(k);
    if (v === undefined && !this.done.has(k)) {
      const raw = this.obj[k];
      if (raw === undefined) return undefined;
      v = jsonValue(raw);
      this.done.set(k, v);
    }
    return v;
  }
  override has(k: string): boolean {
    return typeof k === 'string' && Object.hasOwn(this.obj, k) && this.obj[k] !== undefined;
  }
  override get size(): number {
    return this.ownKeys().length;
  }
  private ownKeys(): string[] {
    return Object.keys(this.obj).filter((k) => this.obj[k] !== undefined);
  }
  override keys(): MapIterator<string> {
    return this.ownKeys()[Symbol.iterator]() as MapIterator<string>;
  }
  override *values(): MapIterator<CelInput> {
    for (const k of this.ownKeys()) yield this.get(k)!;
  }
  override *entries(): MapIterator<[string, CelInput]> {
    for (const k of this.ownKeys()) yield [k, this.get(k)!];
  }
  override [Symbol.iterator](): MapIterator<[string, CelInput]> {
    return this.entries();
  }
  override forEach(fn: (value: CelInput, key: string, map: Map<string, CelInput>) => void, thisArg?: unknown): void {
    for (const [k, v] of this.entries()) fn.call(thisArg, v, k, this);
  }
}

/**
 * An object as kube's admission expressions see it (unstructured content):
 * integers are ints, other numbers doubles, strings stay strings (no schema
 * makes them timestamps), every key is data. Objects are converted lazily.
 */
export function jsonValue(v: unknown): CelInput {
  if (v === null || v === undefined) return null;
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (typeof v === 'string' || typeof v === 'boolean') return v;
  if (Array.isArray(v)) return v.map(jsonValue);
  if (typeof v === 'object') return new JsonObjectMap(v as Record<string, unknown>);
  return null;
}

/** The `authorizer` variable's value for a request on this resource (its `requestResource`). */
export function requestAuthorizer(r: Pick<AdmissionRequestInput, 'resource' | 'subResource' | 'namespace' | 'name'>): CelInput {
  return authorizerValue({ group: r.resource.group, resource: r.resource.resource, subresource: r.subResource, namespace: r.namespace, name: r.name });
}
