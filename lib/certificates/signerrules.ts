// What each kubernetes.io signer accepts, as kube-controller-manager's csrsigning
// checks it before signing (a request that breaks a rule gets the Failed
// condition with the rule's message), and the node-client shape csrapproving
// recognizes. Messages are kube's.
import type { ParsedCsr } from './csr.js';

export const KUBE_APISERVER_CLIENT = 'kubernetes.io/kube-apiserver-client';
export const KUBELET_CLIENT = 'kubernetes.io/kube-apiserver-client-kubelet';
export const KUBELET_SERVING = 'kubernetes.io/kubelet-serving';

/** Go's %v of a sorted string slice. */
const shown = (s: readonly string[]) => `[${[...s].sort().join(' ')}]`;

const sameSet = (a: ReadonlySet<string>, b: readonly string[]) => a.size === b.length && b.every((x) => a.has(x));

const KUBELET_CLIENT_USAGES = ['digital signature', 'key encipherment', 'client auth'];
const KUBELET_CLIENT_USAGES_NO_RSA = ['digital signature', 'client auth'];
const KUBELET_SERVING_USAGES = ['digital signature', 'key encipherment', 'server auth'];
const KUBELET_SERVING_USAGES_NO_RSA = ['digital signature', 'server auth'];

function systemNodesOnly(csr: ParsedCsr): boolean {
  return csr.organizations.length === 1 && csr.organizations[0] === 'system:nodes';
}

/** kube's ValidateKubeletClientCSR: undefined when the request is a node's client certificate. */
export function kubeletClientProblem(csr: ParsedCsr, usages: readonly string[]): string | undefined {
  if (!systemNodesOnly(csr)) return 'subject organization is not system:nodes';
  if (csr.dnsNames.length) return 'DNS subjectAltNames are not allowed';
  if (csr.emailAddresses.length) return 'Email subjectAltNames are not allowed';
  if (csr.ipAddresses.length) return 'IP subjectAltNames are not allowed';
  if (csr.uris.length) return 'URI subjectAltNames are not allowed';
  if (!csr.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  const set = new Set(usages);
  if (!sameSet(set, KUBELET_CLIENT_USAGES) && !sameSet(set, KUBELET_CLIENT_USAGES_NO_RSA)) return `usages did not match ${shown(KUBELET_CLIENT_USAGES)}`;
  return undefined;
}

/** kube's ValidateKubeletServingCSR. */
export function kubeletServingProblem(csr: ParsedCsr, usages: readonly string[]): string | undefined {
  if (!systemNodesOnly(csr)) return 'subject organization is not system:nodes';
  if (csr.dnsNames.length === 0 && csr.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required';
  if (csr.emailAddresses.length) return 'Email subjectAltNames are not allowed';
  if (csr.uris.length) return 'URI subjectAltNames are not allowed';
  const set = new Set(usages);
  if (!sameSet(set, KUBELET_SERVING_USAGES) && !sameSet(set, KUBELET_SERVING_USAGES_NO_RSA)) return `usages did not match ${shown(KUBELET_SERVING_USAGES)}`;
  if (!csr.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  return undefined;
}

/** kube's validAPIServerClientUsages. */
export function apiserverClientProblem(_csr: ParsedCsr, usages: readonly string[]): string | undefined {
  let clientAuth = false;
  for (const u of usages) {
    if (u === 'client auth') clientAuth = true;
    else if (u !== 'digital signature' && u !== 'key encipherment') return `invalid usage for client certificate: ${u}`;
  }
  return clientAuth ? undefined : 'missing required usage for client certificate: client auth';
}

/** The rules of the signers Gatehouse runs; a signer name not here is not Gatehouse's to sign. */
export const SIGNER_RULES: ReadonlyMap<string, (csr: ParsedCsr, usages: readonly string[]) => string | undefined> = new Map([
  [KUBE_APISERVER_CLIENT, apiserverClientProblem],
  [KUBELET_CLIENT, kubeletClientProblem],
  [KUBELET_SERVING, kubeletServingProblem],
]);

/** Keys Gatehouse does not certify although kube's parser reads them. */
export function keyProblem(csr: ParsedCsr): string | undefined {
  if (csr.keyType === 'rsa' && (csr.rsaBits ?? 0) < 2048) return `RSA keys of ${csr.rsaBits ?? 0} bits are not signed: at least 2048 bits are required`;
  return undefined;
}
