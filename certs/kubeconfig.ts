// Renders a kubeconfig with every credential embedded (`*-data` fields), so the
// file works from any directory and can be copied to another machine as is.
import { isIP } from 'node:net';
import { stringify } from 'yaml';

export interface KubeconfigInput {
  server: string;
  caPem: string;
  clientCertPem: string;
  clientKeyPem: string;
  /** Defaults to `gatehouse`. */
  clusterName?: string;
  /** Defaults to `admin`. */
  userName?: string;
  /** Defaults to `<user>@<cluster>`, kubeadm's convention. */
  contextName?: string;
}

export const DEFAULT_CLUSTER_NAME = 'gatehouse';
export const DEFAULT_USER_NAME = 'admin';

/** `https://host:port`, with IPv6 literals bracketed and the unspecified bind addresses mapped to loopback. */
export function serverUrl(host: string, port: number): string {
  const h = host.replace(/^\[(.*)\]$/, '$1');
  // A server bound to every address is still reached through loopback from the same machine.
  const reachable = h === '0.0.0.0' || h === '' ? '127.0.0.1' : h === '::' ? '::1' : h;
  return `https://${isIP(reachable) === 6 ? `[${reachable}]` : reachable}:${port}`;
}

/** A kubeconfig of one cluster (its server and CA embedded), one user with the given credentials block, and their context. */
export function renderKubeconfigWith(
  input: Pick<KubeconfigInput, 'server' | 'caPem' | 'clusterName' | 'contextName'> & { userName: string; credentials: Record<string, unknown> },
): string {
  const cluster = input.clusterName ?? DEFAULT_CLUSTER_NAME;
  const user = input.userName;
  const context = input.contextName ?? `${user}@${cluster}`;
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: input.server, 'certificate-authority-data': b64(input.caPem) } }],
    users: [{ name: user, user: input.credentials }],
    contexts: [{ name: context, context: { cluster, user } }],
    'current-context': context,
    preferences: {},
  };
  // lineWidth 0: never fold the long base64 scalars.
  return stringify(doc, { lineWidth: 0 });
}

/** A kubeconfig whose user logs in with an embedded client certificate and key. */
export function renderKubeconfig(input: KubeconfigInput): string {
  return renderKubeconfigWith({
    ...input,
    userName: input.userName ?? DEFAULT_USER_NAME,
    credentials: { 'client-certificate-data': b64(input.clientCertPem), 'client-key-data': b64(input.clientKeyPem) },
  });
}

function b64(pem: string): string {
  return Buffer.from(pem, 'utf8').toString('base64');
}
