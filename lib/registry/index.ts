// The Registry: every served resource type, indexed once for the request hot
// path (Maps, no scans) and frozen, so a registry can be shared by all requests
// and swapped whole when custom resources arrive (build a new one with extend).
import type { ResourceType, Subresource } from './types.js';
import { BUILTIN_TYPES } from './builtins/index.js';
import { compareGroups, compareVersions } from './priority.js';

export type { ResourceType, Subresource, Column, NameRule, Verb } from './types.js';
export { apiVersionOf, ALL_VERBS } from './types.js';

/** A named API group as discovery lists it: versions most preferred first. */
export interface GroupVersions {
  readonly name: string;
  readonly versions: readonly string[];
  readonly preferredVersion: string;
}

const key = (...parts: string[]) => parts.join('/');

/** Types already frozen with their parts: every registry swap builds a registry of all of them again. */
const frozen = new WeakSet<ResourceType>();

function freezeType(t: ResourceType): ResourceType {
  if (frozen.has(t)) return t;
  for (const s of t.subresources) Object.freeze(s);
  for (const c of t.columns ?? []) Object.freeze(c);
  Object.freeze(t.shortNames);
  Object.freeze(t.categories);
  Object.freeze(t.verbs);
  Object.freeze(t.subresources);
  Object.freeze(t.fieldSelectors);
  if (t.columns) Object.freeze(t.columns);
  if (t.storageVersion) Object.freeze(t.storageVersion);
  frozen.add(t);
  return Object.freeze(t);
}

export class Registry {
  readonly #types: readonly ResourceType[];
  readonly #byPlural = new Map<string, ResourceType>();
  readonly #byKind = new Map<string, ResourceType>();
  readonly #byName = new Map<string, ResourceType[]>();
  readonly #byGroupVersion = new Map<string, ResourceType[]>();
  /**
   * group → version → plural, for `lookup` and `hasGroupVersion` on every request: the request's own
   * strings are looked up (their hashes cached on them), no key string joined per call (~3 per GET).
   */
  readonly #nested = new Map<string, Map<string, Map<string, ResourceType>>>();
  /**
   * The last `lookup`'s question and answer: a request asks the same one ~3 times with the same strings
   * (dispatch, the gateway-served check, the backend), answered here by compares, not three Map probes each.
   * (Private fields stay writable on the frozen registry.)
   */
  #lastGroup = '';
  #lastVersion = '';
  #lastPlural = '';
  #lastType: ResourceType | undefined;
  readonly #groups: readonly GroupVersions[];
  readonly #groupByName = new Map<string, GroupVersions>();
  readonly #coreVersions: readonly string[];

  /** Throws when two types claim the same resource or kind in one group version. */
  constructor(types: readonly ResourceType[]) {
    const versionsOf = new Map<string, Set<string>>();
    for (const t of types) {
      const pk = key(t.group, t.version, t.plural);
      if (this.#byPlural.has(pk)) throw new Error(`duplicate resource type "${pk}" in registry`);
      const kk = key(t.group, t.version, t.kind);
      if (this.#byKind.has(kk)) throw new Error(`duplicate kind "${kk}" in registry`);
      this.#byPlural.set(pk, freezeType(t));
      this.#byKind.set(kk, t);
      let versions = this.#nested.get(t.group);
      if (!versions) this.#nested.set(t.group, (versions = new Map()));
      let plurals = versions.get(t.version);
      if (!plurals) versions.set(t.version, (plurals = new Map()));
      plurals.set(t.plural, t);
      const gv = key(t.group, t.version);
      const inGv = this.#byGroupVersion.get(gv) ?? [];
      inGv.push(t);
      this.#byGroupVersion.set(gv, inGv);
      const vs = versionsOf.get(t.group) ?? new Set<string>();
      vs.add(t.version);
      versionsOf.set(t.group, vs);
    }
    for (const list of this.#byGroupVersion.values()) {
      list.sort((a, b) => (a.plural < b.plural ? -1 : a.plural > b.plural ? 1 : 0));
      Object.freeze(list);
    }
    this.#coreVersions = Object.freeze([...(versionsOf.get('') ?? [])].sort(compareVersions));
    this.#groups = Object.freeze(
      [...versionsOf.keys()]
        .filter((g) => g !== '')
        .sort(compareGroups)
        .map((name) => {
          const versions = Object.freeze([...versionsOf.get(name)!].sort(compareVersions));
          return Object.freeze({ name, versions, preferredVersion: versions[0]! });
        }),
    );
    for (const g of this.#groups) this.#groupByName.set(g.name, g);

    // Name resolution in discovery order (core, then groups by priority, preferred versions first),
    // so that the first match is the one kubectl would pick.
    const ordered = [...this.#coreVersions.map((v) => key('', v)), ...this.#groups.flatMap((g) => g.versions.map((v) => key(g.name, v)))];
    this.#types = Object.freeze(ordered.flatMap((gv) => this.#byGroupVersion.get(gv) ?? []));
    for (const t of this.#types) {
      for (const n of new Set([t.plural, t.singular, ...t.shortNames])) {
        const hits = this.#byName.get(n) ?? [];
        hits.push(t);
        this.#byName.set(n, hits);
      }
    }
    for (const hits of this.#byName.values()) Object.freeze(hits);
    Object.freeze(this);
  }

  /** Every type, in discovery order. */
  all(): readonly ResourceType[] {
    return this.#types;
  }

  /** The type served at `/apis/<group>/<version>/<plural>` (group '' = core). */
  lookup(group: string, version: string, plural: string): ResourceType | undefined {
    if (this.#lastType !== undefined && plural === this.#lastPlural && version === this.#lastVersion && group === this.#lastGroup) return this.#lastType;
    const t = this.#nested.get(group)?.get(version)?.get(plural);
    if (t !== undefined) {
      this.#lastGroup = group;
      this.#lastVersion = version;
      this.#lastPlural = plural;
      this.#lastType = t;
    }
    return t;
  }

  byKind(group: string, version: string, kind: string): ResourceType | undefined {
    return this.#byKind.get(key(group, version, kind));
  }

  /** Types whose plural, singular or short name is `name`, across groups, in discovery order. */
  byName(name: string): readonly ResourceType[] {
    return this.#byName.get(name) ?? [];
  }

  hasGroupVersion(group: string, version: string): boolean {
    return this.#nested.get(group)?.has(version) === true;
  }

  /** The types of one group version, sorted by plural (the order of APIResourceList). */
  resourcesOf(group: string, version: string): readonly ResourceType[] {
    return this.#byGroupVersion.get(key(group, version)) ?? [];
  }

  /** Versions of the core group, most preferred first (served under /api). */
  coreVersions(): readonly string[] {
    return this.#coreVersions;
  }

  /** Named groups in kube-apiserver's /apis order; the core group is not among them. */
  groups(): readonly GroupVersions[] {
    return this.#groups;
  }

  group(name: string): GroupVersions | undefined {
    return this.#groupByName.get(name);
  }

  /** A new registry with more types (custom resources); this one is unchanged. */
  extend(types: readonly ResourceType[]): Registry {
    return new Registry([...this.#types, ...types]);
  }
}

export function subresourceOf(t: ResourceType, name: string): Subresource | undefined {
  return t.subresources.find((s) => s.name === name);
}

let builtins: Registry | undefined;

/** The registry of all built-in types, built once per process. */
export function builtinRegistry(): Registry {
  builtins ??= new Registry(BUILTIN_TYPES);
  return builtins;
}
