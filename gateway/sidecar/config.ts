// What sidecar mode reads at start, besides the serving certificate: the
// --resource-attributes file (kube-rbac-proxy's config file) and, for a
// TokenReview or SubjectAccessReview without a webhook kubeconfig, the pod's
// in-cluster configuration.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../../lib/config/error.js';
import type { ClientConfig } from '../../lib/kubeconfig/index.js';

export const IN_CLUSTER_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

export interface ResourceAttributes {
  readonly namespace: string;
  readonly apiGroup: string;
  readonly apiVersion: string;
  readonly resource: string;
  readonly subresource: string;
  readonly name: string;
}

/** Reads --resource-attributes: `resourceAttributes:` at the top or under `authorization:` (kube-rbac-proxy's config file). */
export async function loadResourceAttributes(file: string): Promise<ResourceAttributes> {
  const bad = (why: string) => new ConfigError(why, { flag: '--resource-attributes', file });
  let doc: unknown;
  try {
    doc = parseYaml(await readFile(file, 'utf8'));
  } catch (err) {
    throw bad(
      err instanceof Error && 'code' in err && err.code === 'ENOENT'
        ? 'no such file'
        : `not YAML or JSON: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
    );
  }
  const obj = (v: unknown): Record<string, unknown> | undefined =>
    typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  const top = obj(doc);
  const ra = obj(top?.['resourceAttributes']) ?? obj(obj(top?.['authorization'])?.['resourceAttributes']);
  if (!ra) throw bad('no resourceAttributes (top level or under authorization)');
  const known = ['namespace', 'apiGroup', 'apiVersion', 'resource', 'subresource', 'name'];
  const unknown = Object.keys(ra).filter((k) => !known.includes(k));
  if (unknown.length > 0) throw bad(`unknown field resourceAttributes.${unknown[0]} (known: ${known.join(', ')})`);
  const out: Record<string, string> = {};
  for (const k of known) {
    const v = ra[k] ?? '';
    if (typeof v !== 'string') throw bad(`resourceAttributes.${k} must be a string`);
    out[k] = v;
  }
  if (out['resource'] === '') throw bad('resourceAttributes.resource is required');
  return Object.freeze(out as unknown as ResourceAttributes);
}

/** InClusterConfig, as client-go's rest.InClusterConfig: the pod's service-account token (re-read) and CA, the service host and port. */
export async function inClusterConfig(path: string, env: NodeJS.ProcessEnv, what: string): Promise<ClientConfig> {
  const host = env['KUBERNETES_SERVICE_HOST'];
  const port = env['KUBERNETES_SERVICE_PORT'];
  const dir = env['GATEHOUSE_SERVICEACCOUNT_DIR'] || IN_CLUSTER_DIR;
  if (!host || !port) {
    throw new ConfigError(`no ${what} and no in-cluster configuration (KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set)`, {
      flag: '--upstream',
    });
  }
  const tokenFile = join(dir, 'token');
  const caFile = join(dir, 'ca.crt');
  await readFile(tokenFile, 'utf8').catch(() => {
    throw new ConfigError(`no ${what} and the in-cluster token ${tokenFile} cannot be read`, { flag: '--upstream' });
  });
  const caPem = await readFile(caFile, 'utf8').catch(() => {
    throw new ConfigError(`no ${what} and the in-cluster CA ${caFile} cannot be read`, { flag: '--upstream' });
  });
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return Object.freeze({
    source: '',
    context: 'in-cluster',
    cluster: Object.freeze({ name: 'in-cluster', server: `https://${hostPart}:${port}${path}`, caPem, insecureSkipTlsVerify: false }),
    user: Object.freeze({ name: 'in-cluster', tokenFile }),
  });
}
