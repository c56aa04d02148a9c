// For a TokenReview or SubjectAccessReview without a webhook kubeconfig,
// the pod's in-cluster configuration.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../../lib/config/error.js';
import type { ClientConfig } from '../../lib/kubeconfig/index.js';

export const IN_CLUSTER_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

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
