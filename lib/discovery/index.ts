// Every discovery document of one Registry, built and serialized once
// (documents never change while a registry is in force; a new registry gets a
// new Discovery), looked up per request by Map.
import type { Registry } from '../registry/index.js';
import { makeDocument, type Document } from './document.js';
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
  /** GET /api */
  readonly api: Document;
  /** GET /apis */
  readonly apis: Document;
  /** GET /version */
  readonly version: Document;
  readonly #groups = new Map<string, Document>();
  readonly #groupVersions = new Map<string, Document>();
  readonly #aggregated = new Map<string, Document>();

  constructor(registry: Registry, opts: DiscoveryOptions = {}) {
    this.api = makeDocument(apiVersions(registry, opts.serverAddressByClientCIDRs ?? []));
    this.apis = makeDocument(apiGroupList(registry));
    this.version = makeDocument(versionInfo(opts.version));
    for (const v of registry.coreVersions()) this.#groupVersions.set(`/${v}`, makeDocument(apiResourceList(registry, '', v)));
    for (const g of registry.groups()) {
      this.#groups.set(g.name, makeDocument(apiGroup(g)));
      for (const v of g.versions) this.#groupVersions.set(`${g.name}/${v}`, makeDocument(apiResourceList(registry, g.name, v)));
    }
    for (const v of ['v2', 'v2beta1'] as const) {
      this.#aggregated.set(`api/${v}`, makeDocument(aggregatedCore(registry, v), aggregatedContentType(v)));
      this.#aggregated.set(`apis/${v}`, makeDocument(aggregatedGroups(registry, v), aggregatedContentType(v)));
    }
    Object.freeze(this);
  }

  /** GET /apis/<group>; undefined when the group is not served. */
  group(name: string): Document | undefined {
    return this.#groups.get(name);
  }

  /** GET /api/<version> (group '') or /apis/<group>/<version>. */
  resources(group: string, version: string): Document | undefined {
    return this.#groupVersions.get(`${group}/${version}`);
  }

  /** GET /api or /apis with an aggregated-discovery Accept header (see negotiateAggregated). */
  aggregated(root: 'api' | 'apis', v: DiscoveryVersion = 'v2'): Document {
    return this.#aggregated.get(`${root}/${v}`)!;
  }
}

export function buildDiscovery(registry: Registry, opts: DiscoveryOptions = {}): Discovery {
  return new Discovery(registry, opts);
}
