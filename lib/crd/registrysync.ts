// Keeps a LiveRegistry equal to the built-in types plus the served versions of
// every Established CustomResourceDefinition, following the CRDs of an
// ObjectSource (the core backend's store, or a remote core backend over HTTP)
// with a Reflector: list, then watch. Every process sharing a store runs one,
// so all of them serve a new CRD as soon as its Established condition reaches
// their watch. Each CRD's types are built once per generation and status
// (its compiled schemas are cached with them); a change swaps the registry
// whole, built once. A CRD's schemas are compiled once per uid and generation
// (its spec): a status write, its establishment or its deletion reuses them, and
// no other CRD's change touches them.
import type { KObject } from '../api/meta.js';
import type { ObjectSource } from '../api/objectsource.js';
import { Reflector } from '../api/reflector.js';
import type { Registry } from '../registry/index.js';
import type { LiveRegistry } from '../registry/live.js';
import type { ResourceType } from '../registry/types.js';
import { isEstablished, olderFirst } from '../registry/builtins/crd-validation.js';
import { compileCrdSchema, type CrdVersionRef, type CrdVersionSchema } from '../crdschema/index.js';
import { crdResourceTypes } from './resourcetypes.js';

/** A CRD's compiled schemas for one spec: what a later build of the same uid and generation reuses. */
interface Compiled {
  readonly key: string;
  readonly byRef: Map<string, CrdVersionSchema>;
}

interface Built {
  /** What the types were built from: uid, generation, deletion and accepted names. */
  readonly key: string;
  readonly types: readonly ResourceType[];
  /** The resources and kinds the types claim (`r/group/version/plural`, `k/group/version/kind`). */
  readonly claims: readonly string[];
}

const claimsOf = (types: readonly ResourceType[]) => types.flatMap((t) => [`r/${t.group}/${t.version}/${t.plural}`, `k/${t.group}/${t.version}/${t.kind}`]);

/** Whether a CRD object is Established, read once per object (a rebuild reads every CRD's). */
const establishedOf = new WeakMap<KObject, boolean>();
function established(crd: KObject): boolean {
  let is = establishedOf.get(crd);
  if (is === undefined) establishedOf.set(crd, (is = isEstablished(crd)));
  return is;
}

/** Each CRD object's key, made once: a rebuild (one per change) reads every CRD's, and the watch hands the same object until it changes. */
const builtKeys = new WeakMap<KObject, string>();
function builtKey(crd: KObject): string {
  let key = builtKeys.get(crd);
  if (key === undefined) {
    key = JSON.stringify([
      crd.metadata.uid,
      crd.metadata.generation,
      crd.metadata.deletionTimestamp !== undefined,
      crd['status'] && (crd['status'] as Record<string, unknown>)['acceptedNames'],
    ]);
    builtKeys.set(crd, key);
  }
  return key;
}

export interface CrdRegistrySyncOptions {
  readonly source: ObjectSource;
  readonly live: LiveRegistry;
  /** The types every registry starts from (the built-ins). */
  readonly base: Registry;
  readonly log: (msg: string) => void;
}

export class CrdRegistrySync {
  readonly #o: CrdRegistrySyncOptions;
  readonly #crds = new Map<string, KObject>();
  readonly #built = new Map<string, Built>();
  readonly #compiled = new Map<string, Compiled>();
  readonly #reflector: Reflector;
  #scheduled = false;
  /** The custom types in force: a pass that finds the same ones (a status write) swaps nothing. */
  #inForce: readonly ResourceType[] = [];
  /** What the built-in types claim, made once. */
  readonly #baseClaims: ReadonlySet<string>;

  constructor(o: CrdRegistrySyncOptions) {
    this.#o = o;
    this.#baseClaims = new Set(claimsOf(o.base.all()));
    this.#reflector = new Reflector(
      o.source,
      [
        {
          group: 'apiextensions.k8s.io',
          resource: 'customresourcedefinitions',
          reset: (items) => {
            this.#crds.clear();
            for (const c of items) this.#crds.set(c.metadata.name ?? '', c);
            this.#rebuild();
          },
          set: (c) => {
            this.#crds.set(c.metadata.name ?? '', c);
            this.#schedule();
          },
          remove: (c) => {
            this.#crds.delete(c.metadata.name ?? '');
            this.#schedule();
          },
        },
      ],
      { who: 'CRD registry', log: o.log, retryMs: 100, maxRetryMs: 5000, retryFirstList: true },
    );
  }

  /** Resolves once the first list is in force. */
  start(): Promise<void> {
    return this.#reflector.start();
  }

  stop(): void {
    this.#reflector.stop();
  }

  /** Changes arriving together (a watch burst) make one registry. */
  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => {
      this.#scheduled = false;
      this.#rebuild();
    });
  }

  #typesOf(crd: KObject): Built {
    const name = crd.metadata.name ?? '';
    const key = builtKey(crd);
    const cached = this.#built.get(name);
    if (cached?.key === key) return cached;
    const specKey = `${crd.metadata.uid}/${crd.metadata.generation}`;
    let c = this.#compiled.get(name);
    if (c?.key !== specKey) this.#compiled.set(name, (c = { key: specKey, byRef: new Map() }));
    const byRef = c.byRef;
    // The accepted names are part of the compiled form (OpenAPI names the kind): they key it too.
    const compile = (schema: unknown, ref: CrdVersionRef): CrdVersionSchema => {
      const k = JSON.stringify([ref.group, ref.version, ref.kind, ref.listKind, ref.plural]);
      let s = byRef.get(k);
      if (s === undefined) byRef.set(k, (s = compileCrdSchema(schema, ref)));
      return s;
    };
    let types: readonly ResourceType[] = [];
    try {
      types = crdResourceTypes(crd, compile);
    } catch (err) {
      this.#o.log(`CRD registry: ${name}: not served: ${err instanceof Error ? err.message : String(err)}`);
    }
    const built = { key, types, claims: claimsOf(types) };
    this.#built.set(name, built);
    return built;
  }

  #rebuild(): void {
    const { base } = this.#o;
    for (const name of [...this.#built.keys()]) if (!this.#crds.has(name)) this.#built.delete(name);
    for (const name of [...this.#compiled.keys()]) if (!this.#crds.has(name)) this.#compiled.delete(name);
    // Older CRDs first: when two claim one resource (the naming controller refuses the later), the earlier keeps it.
    const crds = [...this.#crds.values()].filter(established).sort(olderFirst);
    const builtinClaims = this.#baseClaims;
    const taken = new Set<string>();
    const added: ResourceType[] = [];
    for (const crd of crds) {
      const { types, claims: keys } = this.#typesOf(crd);
      if (keys.some((k) => builtinClaims.has(k) || taken.has(k)) || new Set(keys).size !== keys.length) {
        this.#o.log(`CRD registry: ${crd.metadata.name}: not served: its resource or kind is served already`);
        continue;
      }
      for (const k of keys) taken.add(k);
      added.push(...types);
    }
    if (added.length === this.#inForce.length && added.every((t, i) => t === this.#inForce[i])) return;
    this.#inForce = added;
    this.#o.live.set(added.length === 0 ? base : base.extend(added));
  }
}
