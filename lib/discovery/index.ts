// Every discovery document of one Registry, built and serialized once, on its
// first request (documents never change while a registry is in force; a new
// registry gets a new Discovery, and a CRD change swaps the registry: building
// every group's documents then cost work for all of them), looked up by Map.
import type { GroupVersions, Registry } from '../registry/index.js';
import { JSON_TYPE, makeDocument, type Document } from './document.js';
import { apiVersions, type ServerAddressByClientCIDR } from './api-versions.js';
import { apiGroup, apiGroupList } from './group-list.js';
import { apiResourceList } from './resource-list.js';
import { aggregatedContentType, aggregatedCore, aggregatedGroups, type DiscoveryVersion } from './aggregated.js';
import { versionInfo, type VersionOptions } from './version.js';

export type { Document } from './document.js';
export type { ServerAddressByClientCIDR } from './api-versions.js';
export type { DiscoveryVersion } from './aggregated.js';
export type { VersionOptions, VersionInfo } from './version.js';
export { negotiateAggregated, aggregatedContentType } from './aggregated.js';
export { storageVersionHash } from './storage-version-hash.js';

export interface DiscoveryOptions {
  /** Served in /api; kube answers `[{clientCIDR: "0.0.0.0/0", serverAddress: "<advertise-address>:<port>"}]`. */
  serverAddressByClientCIDRs?: readonly ServerAddressByClientCIDR[];
  version?: VersionOptions;
}

export class Discovery {
  readonly #registry: Registry;
  readonly #opts: DiscoveryOptions;
  /** The group names and group/version keys served, known at once; their documents built on first request. */
  readonly #groupNames: ReadonlyMap<string, GroupVersions>;
  readonly #groupVersionKeys: ReadonlySet<string>;
  readonly #built = new Map<string, Document>();

  constructor(registry: Registry, opts: DiscoveryOptions = {}) {
    this.#registry = registry;
    this.#opts = opts;
    const keys = new Set<string>();
    for (const v of registry.coreVersions()) keys.add(`/${v}`);
    const groups = new Map<string, GroupVersions>();
    for (const g of registry.groups()) {
      groups.set(g.name, g);
      for (const v of g.versions) keys.add(`${g.name}/${v}`);
    }
    this.#groupNames = groups;
    this.#groupVersionKeys = keys;
    Object.freeze(this);
  }

  /** A document built once, on its first request: a registry swap (a CRD change) then costs only what is asked for. */
  #once(key: string, build: () => Document): Document {
    let d = this.#built.get(key);
    if (d === undefined) this.#built.set(key, (d = build()));
    return d;
  }

  /** GET /api */
  get api(): Document {
    return this.#once('api', () => makeDocument(apiVersions(this.#registry, this.#opts.serverAddressByClientCIDRs ?? []), JSON_TYPE, 'encoded'));
  }

  /** GET /apis */
  get apis(): Document {
    return this.#once('apis', () => makeDocument(apiGroupList(this.#registry), JSON_TYPE, 'encoded'));
  }

  /** GET /version */
  get version(): Document {
    return this.#once('version', () => makeDocument(versionInfo(this.#opts.version), JSON_TYPE, 'indented'));
  }

  /** GET /apis/<group>; undefined when the group is not served. */
  group(name: string): Document | undefined {
    const g = this.#groupNames.get(name);
    return g && this.#once(`group ${name}`, () => makeDocument(apiGroup(g), JSON_TYPE, 'encoded'));
  }

  /** GET /api/<version> (group '') or /apis/<group>/<version>. */
  resources(group: string, version: string): Document | undefined {
    const key = `${group}/${version}`;
    if (!this.#groupVersionKeys.has(key)) return undefined;
    return this.#once(`resources ${key}`, () => makeDocument(apiResourceList(this.#registry, group, version), JSON_TYPE, 'encoded'));
  }

  /** GET /api or /apis with an aggregated-discovery Accept header (see negotiateAggregated). */
  aggregated(root: 'api' | 'apis', v: DiscoveryVersion = 'v2'): Document {
    return this.#once(`aggregated ${root}/${v}`, () =>
      root === 'api'
        ? makeDocument(aggregatedCore(this.#registry, v), aggregatedContentType(v), 'encoded')
        : makeDocument(aggregatedGroups(this.#registry, v), aggregatedContentType(v), 'encoded'),
    );
  }
}

export function buildDiscovery(registry: Registry, opts: DiscoveryOptions = {}): Discovery {
  return new Discovery(registry, opts);
}
