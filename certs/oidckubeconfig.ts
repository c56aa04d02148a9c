// `gatehouse certs oidc-kubeconfig`: a kubeconfig for people who log in with
// OpenID Connect. The cluster is the dev PKI's (its CA and server); the user
// runs `kubectl gatehouse oidc-login get-token` with kubelogin's flags, as the
// plugin's `setup` prints them; and the serve flags that accept those tokens.
import { stringify } from 'yaml';
import { DEFAULT_CLUSTER_NAME } from './kubeconfig.js';

export interface OidcKubeconfigInput {
  readonly server: string;
  readonly caPem: string;
  readonly issuerUrl: string;
  readonly clientId: string;
  readonly clientSecret?: string;
  readonly extraScopes: readonly string[];
  /** The provider's CA files (get-token's --certificate-authority). */
  readonly providerCas: readonly string[];
  /** More get-token flags, as given (`--grant-type=password`, `--token-cache-dir=…`). */
  readonly extraArgs: readonly string[];
  /** Defaults to `oidc`. */
  readonly userName?: string;
}

/** get-token's arguments, in the order kubelogin's own setup prints them. */
export function getTokenArgs(i: OidcKubeconfigInput): string[] {
  return [
    `--oidc-issuer-url=${i.issuerUrl}`,
    `--oidc-client-id=${i.clientId}`,
    ...(i.clientSecret !== undefined ? [`--oidc-client-secret=${i.clientSecret}`] : []),
    ...i.extraScopes.map((s) => `--oidc-extra-scope=${s}`),
    ...i.providerCas.map((f) => `--certificate-authority=${f}`),
    ...i.extraArgs,
  ];
}

export function renderOidcKubeconfig(i: OidcKubeconfigInput): string {
  const cluster = DEFAULT_CLUSTER_NAME;
  const user = i.userName ?? 'oidc';
  const context = `${user}@${cluster}`;
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: i.server, 'certificate-authority-data': Buffer.from(i.caPem, 'utf8').toString('base64') } }],
    users: [
      {
        name: user,
        user: {
          exec: {
            apiVersion: 'client.authentication.k8s.io/v1',
            command: 'kubectl',
            args: ['gatehouse', 'oidc-login', 'get-token', ...getTokenArgs(i)],
            // The browser login needs no terminal; the password and keyboard grants prompt when one is there.
            interactiveMode: 'IfAvailable',
            provideClusterInfo: false,
          },
        },
      },
    ],
    contexts: [{ name: context, context: { cluster, user } }],
    'current-context': context,
    preferences: {},
  };
  return stringify(doc, { lineWidth: 0 });
}

/** The serve flags that accept the provider's ID tokens for this client. */
export function serveFlags(i: OidcKubeconfigInput): string[] {
  return [`--oidc-issuer-url=${i.issuerUrl}`, `--oidc-client-id=${i.clientId}`, ...i.providerCas.slice(0, 1).map((f) => `--oidc-ca-file=${f}`)];
}
