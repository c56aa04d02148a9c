// `gatehouse certs oidc-kubeconfig`: a kubeconfig for people who log in with
// OpenID Connect. The cluster is the dev PKI's (its CA and server); the user
// runs `kubectl gatehouse oidc-login get-token` with kubelogin's flags, as the
// plugin's `setup` prints them; and the serve flags that accept those tokens.
import { renderKubeconfigWith } from './kubeconfig.js';

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
  return renderKubeconfigWith({
    server: i.server,
    caPem: i.caPem,
    userName: i.userName ?? 'oidc',
    credentials: {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: 'kubectl',
        args: ['gatehouse', 'oidc-login', 'get-token', ...getTokenArgs(i)],
        // The browser login needs no terminal; the password and keyboard grants prompt when one is there.
        interactiveMode: 'IfAvailable',
        provideClusterInfo: false,
      },
    },
  });
}

/** The serve flags that accept the provider's ID tokens for this client. */
export function serveFlags(i: OidcKubeconfigInput): string[] {
  return [`--oidc-issuer-url=${i.issuerUrl}`, `--oidc-client-id=${i.clientId}`, ...i.providerCas.slice(0, 1).map((f) => `--oidc-ca-file=${f}`)];
}
