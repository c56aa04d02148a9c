// The core backend: the generic resource API over a Store. Resolves the
// resource type of a request and hands it to the verb's handler.
import type { ApiBackend, BackendRequest, CreateAdmission } from '../../lib/api/backend.js';
import { createAdmission } from './admission/creates.js';
import { methodNotAllowed, pathNotFound, unsupportedMediaType } from '../../lib/api/status.js';
import type { Verb } from '../../lib/registry/types.js';
import type { CoreEnv } from './env.js';
import { deleteCollection, deleteObject } from './handlers/delete.js';
import { getObject, listObjects } from './handlers/read.js';
import { watchObjects } from './handlers/watch.js';
import { create, update } from './handlers/write.js';
import { patch } from './handlers/patch.js';
import { createToken } from './handlers/tokenrequest.js';
import { serveScale } from './handlers/scale.js';
import { serveComponentStatuses } from './handlers/componentstatuses.js';
import { tracedEnv } from './tracedenv.js';
import { CORE_SUBRESOURCES } from './handlers/pods.js';

const COLLECTION_VERBS = new Set(['list', 'watch', 'create', 'deletecollection']);
/** Subresources a PATCH writes through the object's own update path. */
const PATCHED_SUBRESOURCES = new Set(['status', 'approval', 'ephemeralcontainers', 'resize']);

export class CoreBackend implements ApiBackend {
  /** `tracedStoreKind`: the process traces, and a recorded request's store calls are spans named for this store. */
  constructor(
    readonly env: CoreEnv,
    private readonly tracedStoreKind?: string,
  ) {}

  serves(group: string, version: string): boolean {
    return this.env.registry.hasGroupVersion(group, version);
  }

  serve(r: BackendRequest): Promise<void> {
    try {
      return Promise.resolve(this.handle(this.envOf(r), r));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  serveNow(r: BackendRequest): void | Promise<void> {
    return this.handle(this.envOf(r), r);
  }

  /** Admission of the creates answered outside this backend (the gateway's reviews), with this backend's plugins. */
  readonly admission: CreateAdmission = createAdmission((r) => this.envOf(r));

  private envOf(r: BackendRequest): CoreEnv {
    const trace = this.tracedStoreKind === undefined ? undefined : r.trace;
    return trace ? tracedEnv(this.env, trace, this.tracedStoreKind!) : this.env;
  }

  private handle(env: CoreEnv, r: BackendRequest): void | Promise<void> {
    const { info } = r;
    const t = env.registry.lookup(info.apiGroup, info.apiVersion, info.resource);
    // Only a proxy subresource has a path of its own after it (nodes/<name>/proxy/<path>).
    if (!t || (info.extraParts > 0 && info.subresource !== 'proxy')) throw pathNotFound();
    const isNamespaceObject = t.group === '' && t.plural === 'namespaces';
    // A cluster-scoped type under /namespaces/<ns>/, or a namespaced object without one, is no path we serve.
    if (!t.namespaced && info.namespace && !isNamespaceObject) throw pathNotFound();
    if (t.namespaced && !info.namespace && (info.name || info.verb === 'create' || info.verb === 'deletecollection')) {
      if (info.verb === 'create' || info.verb === 'deletecollection')
        throw methodNotAllowed(r.req.method ?? '', `the cluster-wide ${t.plural} collection: name a namespace`);
      throw pathNotFound();
    }
    const verb = info.verb;
    if (info.subresource) {
      const sub = t.subresources.find((s) => s.name === info.subresource);
      if (!sub) throw pathNotFound();
      if (!sub.verbs.includes(verb as Verb)) throw methodNotAllowed(r.req.method ?? '', `${t.plural}/${sub.name}`);
      if (sub.name === 'token' && t.group === '' && t.plural === 'serviceaccounts') {
        if (!env.tokens) throw pathNotFound();
        return createToken(env, env.tokens, t, r);
      }
      if (sub.name === 'scale' && t.scale) return serveScale(env, t, r);
      const own = t.group === '' ? CORE_SUBRESOURCES.get(`${t.plural}/${sub.name}`) : undefined;
      if (own) return own(env, t, r);
      if (verb === 'get') return getObject(env, t, r);
      if (verb === 'update') return update(env, t, r);
      if (verb === 'patch' && PATCHED_SUBRESOURCES.has(sub.name)) return patch(env, t, r);
      throw patchNotYet(r);
    }
    if (!info.name && !COLLECTION_VERBS.has(verb)) throw methodNotAllowed(r.req.method ?? '', `the ${t.plural} collection`);
    if (info.name && verb === 'create') throw methodNotAllowed('POST', `a single ${t.singular}: POST to the collection`);
    if (!t.verbs.includes(verb as Verb)) throw methodNotAllowed(r.req.method ?? '', t.plural);
    // kube's crdHandler: no new objects while the CRD's cleanup deletes the old ones.
    if (t.terminating && verb === 'create') throw methodNotAllowed('create', `resources of kind "${t.plural}.${t.group}"`);
    if (t.computed) return serveComponentStatuses(env, t, r);
    switch (verb) {
      case 'get':
        return getObject(env, t, r);
      case 'list':
        return listObjects(env, t, r);
      case 'watch':
        return watchObjects(env, t, r);
      case 'create':
        return create(env, t, r);
      case 'update':
        return update(env, t, r);
      case 'delete':
        return deleteObject(env, t, r);
      case 'deletecollection':
        return deleteCollection(env, t, r);
      case 'patch':
        return patch(env, t, r);
      default:
        throw methodNotAllowed(r.req.method ?? '', t.plural);
    }
  }

  /** Ends every open watch (shutdown). */
  closeWatches(): void {
    for (const close of [...this.env.watches]) close();
  }
}

function patchNotYet(r: BackendRequest) {
  return unsupportedMediaType(String(r.req.headers['content-type'] ?? ''), ['application/json (PUT)']);
}
