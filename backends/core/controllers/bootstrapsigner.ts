// The bootstrap signer (kube-controller-manager's `bootstrapsigner`): keeps
// the `cluster-info` ConfigMap in kube-public — creating it with a
// `kubeconfig` (the CA and the server) when absent — and a detached HS256 JWS
// `jws-kubeconfig-<id>` of that kubeconfig for every unexpired bootstrap
// token with `usage-bootstrap-signing: true`, keyed by the whole token.
// Signatures follow the tokens and the kubeconfig; stale ones are removed.
import { stringify } from 'yaml';
import { isPlainObject, type KObject } from '../../../lib/api/meta.js';
import { BOOTSTRAP_TOKEN_NAMESPACE, isExpired, parseBootstrapSecret } from '../../../lib/bootstrap/token.js';
import type { CoreEnv } from '../env.js';
import { listPrefix, objectKey } from '../keys.js';
import { prepareCreate } from '../objects.js';
import { guaranteedUpdate, StoreError } from '../store/types.js';
import { coreType, WatchingController } from './loop.js';

export const CLUSTER_INFO_NAMESPACE = 'kube-public';
export const CLUSTER_INFO_NAME = 'cluster-info';
export const JWS_KEY_PREFIX = 'jws-kubeconfig-';

export interface ClusterInfoSource {
  /** The server URL clients should use. */
  server: string;
  /** The cluster CA bundle (PEM). */
  caPem: string;
}

/** The kubeconfig kubeadm puts in cluster-info: one nameless cluster, nothing else. */
export function clusterInfoKubeconfig(src: ClusterInfoSource): string {
  return stringify({
    apiVersion: 'v1',
    clusters: [{ cluster: { 'certificate-authority-data': Buffer.from(src.caPem).toString('base64'), server: src.server }, name: '' }],
    contexts: null,
    'current-context': '',
    kind: 'Config',
    preferences: {},
    users: null,
  });
}

/** `<header>..<signature>`: a compact HS256 JWS of content with its payload removed. */
export async function detachedSignature(content: string, tokenId: string, tokenSecret: string): Promise<string> {
  // jose is imported on first use: its module loading is no part of a start (bench/startup.ts).
  const { CompactSign } = await import('jose');
  const jws = await new CompactSign(new TextEncoder().encode(content))
    .setProtectedHeader({ alg: 'HS256', kid: tokenId })
    .sign(new TextEncoder().encode(`${tokenId}.${tokenSecret}`));
  const [header, , signature] = jws.split('.');
  return `${header}..${signature}`;
}

export class BootstrapSigner extends WatchingController {
  constructor(
    env: CoreEnv,
    private readonly source: ClusterInfoSource,
    retryMs?: number,
  ) {
    super(
      env,
      'bootstrapsigner',
      [listPrefix(coreType(env, 'secrets'), BOOTSTRAP_TOKEN_NAMESPACE), listPrefix(coreType(env, 'configmaps'), CLUSTER_INFO_NAMESPACE)],
      retryMs,
    );
  }

  protected async pass(): Promise<number | undefined> {
    const now = this.env.clock();
    const { items } = await this.env.store.list(listPrefix(coreType(this.env, 'secrets'), BOOTSTRAP_TOKEN_NAMESPACE));
    const signing: Array<{ id: string; secret: string }> = [];
    let next: number | undefined;
    for (const s of items) {
      if (s.metadata.deletionTimestamp) continue;
      const tok = parseBootstrapSecret(s);
      if (typeof tok === 'string' || !tok.usages.has('signing') || isExpired(tok, now)) continue;
      signing.push({ id: tok.id, secret: tok.secret });
      if (tok.expiresAt !== undefined && (next === undefined || tok.expiresAt < next)) next = tok.expiresAt;
    }
    await this.ensureSigned(signing);
    return next;
  }

  private async ensureSigned(tokens: ReadonlyArray<{ id: string; secret: string }>): Promise<void> {
    const t = coreType(this.env, 'configmaps');
    const key = objectKey(t, CLUSTER_INFO_NAMESPACE, CLUSTER_INFO_NAME);
    if (!(await this.env.store.get(key))) {
      const cm = prepareCreate(
        t,
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: { name: CLUSTER_INFO_NAME, namespace: CLUSTER_INFO_NAMESPACE },
          data: { kubeconfig: clusterInfoKubeconfig(this.source) },
        },
        this.env.clock(),
      );
      try {
        await this.env.store.create(key, cm);
      } catch (err) {
        if (!(err instanceof StoreError && err.code === 'exists')) throw err;
      }
    }
    await guaranteedUpdate(this.env.store, key, async (cur: KObject) => {
      if (cur.metadata.deletionTimestamp) return null;
      const data: Record<string, unknown> = isPlainObject(cur['data']) ? { ...cur['data'] } : {};
      if (typeof data['kubeconfig'] !== 'string') data['kubeconfig'] = clusterInfoKubeconfig(this.source);
      const content = data['kubeconfig'] as string;
      const want = new Map<string, string>();
      for (const tok of tokens) want.set(`${JWS_KEY_PREFIX}${tok.id}`, await detachedSignature(content, tok.id, tok.secret));
      let changed = !isPlainObject(cur['data']) || typeof cur['data']['kubeconfig'] !== 'string';
      for (const k of Object.keys(data)) {
        if (k.startsWith(JWS_KEY_PREFIX) && !want.has(k)) {
          delete data[k];
          changed = true;
        }
      }
      for (const [k, v] of want) {
        if (data[k] !== v) {
          data[k] = v;
          changed = true;
        }
      }
      return changed ? { ...cur, metadata: { ...cur.metadata }, data } : null;
    });
  }
}
