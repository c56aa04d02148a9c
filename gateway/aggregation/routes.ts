// Which proxy serves which remote group version, kept from the APIService
// informer: one ApiServiceProxy per APIService with a service (a local one
// has none), updated in place on change, closed on delete. `apply` says
// what the caller must tell the availability controller and discovery.
import type { ApiServiceInfo } from './apiservice.js';
import { ApiServiceProxy, type ProxyEnv } from './proxy.js';

export interface RouteChange {
  /** Probe this APIService again (new, or its transport changed). */
  readonly probe?: string;
  /** Discovery changed: this proxy's group version, or one removed (undefined). */
  readonly discovery: boolean;
  readonly proxy?: ApiServiceProxy;
}

const NOTHING: RouteChange = Object.freeze({ discovery: false });

export class ApiServiceRoutes {
  readonly #byName = new Map<string, ApiServiceProxy>();
  readonly #byGroupVersion = new Map<string, ApiServiceProxy>();

  get(name: string): ApiServiceProxy | undefined {
    return this.#byName.get(name);
  }
  names(): Iterable<string> {
    return this.#byName.keys();
  }
  proxies(): Iterable<ApiServiceProxy> {
    return this.#byName.values();
  }
  /**
   * The last group version asked for and its answer (a proxy or none), until the routes change: every resource request
   * under /apis/ asks, mostly for the group version before (a request target's parts are the same strings each time,
   * pipeline/context.ts), and the key string made and hashed was ~1k instructions a proxied GET.
   */
  #lastGroup: string | undefined;
  #lastVersion = '';
  #lastRoute: ApiServiceProxy | undefined;

  route(group: string, version: string): ApiServiceProxy | undefined {
    if (group === this.#lastGroup && version === this.#lastVersion) return this.#lastRoute;
    const p = this.#byGroupVersion.get(`${group}/${version}`);
    this.#lastGroup = group;
    this.#lastVersion = version;
    this.#lastRoute = p;
    return p;
  }

  apply(info: ApiServiceInfo, deleted: boolean, env: ProxyEnv): RouteChange {
    this.#lastGroup = undefined;
    this.#lastRoute = undefined;
    const existing = this.#byName.get(info.name);
    if (deleted || !info.service) {
      if (!existing) return NOTHING;
      this.#byName.delete(info.name);
      this.#byGroupVersion.delete(`${existing.info.group}/${existing.info.version}`);
      existing.close();
      return { discovery: true };
    }
    let proxy = existing;
    let probe: string | undefined;
    if (proxy) {
      const before = proxy.info;
      proxy.update(info);
      if (before.group !== info.group || before.version !== info.version) this.#byGroupVersion.delete(`${before.group}/${before.version}`);
      if (before.transportKey !== info.transportKey) probe = info.name;
    } else {
      proxy = new ApiServiceProxy(info, env);
      this.#byName.set(info.name, proxy);
      probe = info.name;
    }
    this.#byGroupVersion.set(`${info.group}/${info.version}`, proxy);
    return { discovery: true, proxy, ...(probe ? { probe } : {}) };
  }

  close(): void {
    for (const p of this.#byName.values()) p.close();
  }
}
