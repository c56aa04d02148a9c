// --runtime-config, kube's syntax: `api/all=false,api/beta=true,<group>/<version>=false,
// <group>/<version>/<resource>=false` (a key without `=` means true; the core
// group is `v1` or `api/v1`). Parsed into rules, then applied to the type
// registry at start: a disabled version or resource is absent from discovery
// and OpenAPI and answers 404. Precedence as kube: api/all, then a stability
// (api/ga, api/beta, api/alpha), then a group version, then a resource.
// Defaults: every served version is on except alpha ones.
import { ConfigError } from '../../lib/config/error.js';
import { builtinRegistry, Registry } from '../../lib/registry/index.js';
import type { ResourceType } from '../../lib/registry/types.js';
import { lifecycleOf, SERVED_VERSIONS, type Stability } from '../../lib/registry/versions.js';

export interface RuntimeConfig {
  readonly all?: boolean;
  readonly stability: Readonly<Partial<Record<Stability, boolean>>>;
  /** `<group>/<version>` ('' group = core) → on. */
  readonly groupVersions: ReadonlyMap<string, boolean>;
  /** `<group>/<version>/<resource>` → on. */
  readonly resources: ReadonlyMap<string, boolean>;
}

export const DEFAULT_RUNTIME_CONFIG: RuntimeConfig = Object.freeze({ stability: Object.freeze({}), groupVersions: new Map(), resources: new Map() });

/** Core types the core backend's controllers and the Node authorizer's graph read and write. */
const NEEDED_CORE = ['namespaces', 'secrets', 'serviceaccounts', 'configmaps', 'pods', 'nodes', 'persistentvolumes', 'persistentvolumeclaims'];

const TRUE = ['1', 't', 'T', 'true', 'TRUE', 'True', ''];
const FALSE = ['0', 'f', 'F', 'false', 'FALSE', 'False'];

export function parseRuntimeConfig(raw: string, base: RuntimeConfig = DEFAULT_RUNTIME_CONFIG): RuntimeConfig {
  let all = base.all;
  const stability: Partial<Record<Stability, boolean>> = { ...base.stability };
  const groupVersions = new Map(base.groupVersions);
  const resources = new Map(base.resources);
  for (const part of raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')) {
    const eq = part.indexOf('=');
    const key = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? '' : part.slice(eq + 1);
    let on: boolean;
    if (TRUE.includes(value)) on = true;
    else if (FALSE.includes(value)) on = false;
    else throw new ConfigError(`invalid value of ${key}: ${value}, err: must be true or false`, { value: part });
    if (key === 'api/all') {
      all = on;
      continue;
    }
    if (key === 'api/ga' || key === 'api/beta' || key === 'api/alpha') {
      stability[key.slice(4) as Stability] = on;
      continue;
    }
    const segs = (key === 'api/v1' || key === 'v1' ? '/v1' : key.startsWith('api/') ? `/${key.slice(4)}` : key).split('/');
    // `v1/pods` (core, with a resource) reads as group "", version v1.
    const [group, version, resource] = segs.length === 2 && segs[0] === 'v1' && segs[1] !== '' && key !== 'api/v1' ? ['', 'v1', segs[1]] : segs;
    if (!version || segs.length > 3 || (segs.length === 3 && !resource))
      throw new ConfigError('must be api/all, api/ga, api/beta, api/alpha, <group>/<version> or <group>/<version>/<resource>', { value: part });
    if (!lifecycleOf(group!, version)) {
      throw new ConfigError(
        `unknown group version "${group ? `${group}/` : ''}${version}" (served: ${SERVED_VERSIONS.map((v) => (v.group ? `${v.group}/${v.version}` : v.version)).join(', ')})`,
        { value: part },
      );
    }
    if (group === '' && !resource && !on)
      throw new ConfigError('the core group (v1) cannot be disabled: the namespace, service-account and RBAC controllers need it', { value: part });
    if (group === '' && resource && !on && NEEDED_CORE.includes(resource)) {
      throw new ConfigError(`v1 ${resource} cannot be disabled: Gatehouse's controllers and Node authorizer read them (${NEEDED_CORE.join(', ')} stay on)`, {
        value: part,
      });
    }
    if (resource) resources.set(`${group}/${version}/${resource}`, on);
    else groupVersions.set(`${group}/${version}`, on);
  }
  return Object.freeze({ ...(all !== undefined ? { all } : {}), stability: Object.freeze(stability), groupVersions, resources });
}

/** Whether a type is served under the configuration. */
export function enabled(c: RuntimeConfig, t: Pick<ResourceType, 'group' | 'version' | 'plural'>): boolean {
  const r = c.resources.get(`${t.group}/${t.version}/${t.plural}`);
  if (r !== undefined) return r;
  const gv = c.groupVersions.get(`${t.group}/${t.version}`);
  if (gv !== undefined) return gv;
  const stability = lifecycleOf(t.group, t.version)?.stability ?? 'ga';
  const s = c.stability[stability];
  if (s !== undefined) return s;
  if (c.all !== undefined) return c.all;
  return stability !== 'alpha';
}

/** Resource names of the configuration that name no served type (a typo), for an error at start. */
function unknownResources(c: RuntimeConfig, types: readonly Pick<ResourceType, 'group' | 'version' | 'plural'>[]): string[] {
  const known = new Set(types.map((t) => `${t.group}/${t.version}/${t.plural}`));
  return [...c.resources.keys()].filter((k) => !known.has(k));
}

/** The built-in registry as --runtime-config leaves it; a resource rule that names no served type stops the start. */
export function servedRegistry(c: RuntimeConfig): Registry {
  const all = builtinRegistry();
  const unknown = unknownResources(c, all.all());
  if (unknown.length > 0) throw new ConfigError(`unknown resource ${unknown.map((u) => `"${u.replace(/^\//, '')}"`).join(', ')}`, { flag: '--runtime-config' });
  // Even the default configuration filters: alpha versions (access.gatehouse.dev/v1alpha1) are off by default.
  return new Registry(all.all().filter((t) => enabled(c, t)));
}

/** Group versions the server's other options need served (a start error names both). */
export function runtimeConfigChecks(
  c: RuntimeConfig,
  o: { enablePriorityAndFairness: boolean; authorizationModes: readonly string[]; upstream: string | undefined },
): string[] {
  const out: string[] = [];
  const on = (group: string, plural: string) => enabled(c, { group, version: 'v1', plural });
  if (
    o.enablePriorityAndFairness &&
    !(on('flowcontrol.apiserver.k8s.io', 'flowschemas') && on('flowcontrol.apiserver.k8s.io', 'prioritylevelconfigurations'))
  ) {
    out.push('--runtime-config turns off flowcontrol.apiserver.k8s.io/v1, which --enable-priority-and-fairness (on by default) needs');
  }
  if (
    o.upstream === undefined &&
    o.authorizationModes.includes('RBAC') &&
    !['roles', 'rolebindings', 'clusterroles', 'clusterrolebindings'].every((p) => on('rbac.authorization.k8s.io', p))
  ) {
    out.push('--runtime-config turns off rbac.authorization.k8s.io/v1, which --authorization-mode=RBAC needs');
  }
  return out;
}
