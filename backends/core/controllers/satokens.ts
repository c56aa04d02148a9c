// The service-account token controller (kube-controller-manager's
// `serviceaccount-token`): fills each `kubernetes.io/service-account-token`
// secret with a legacy token (issuer `kubernetes/serviceaccount`), `ca.crt`
// and `namespace`, and stamps the service account's uid; deletes such
// secrets whose service account is gone or was recreated with another uid.
import { isPlainObject, type KObject } from '../../../lib/api/meta.js';
import { legacyClaims, SA_NAME_ANNOTATION, SA_TOKEN_SECRET_TYPE, SA_UID_ANNOTATION } from '../../../lib/serviceaccount/claims.js';
import type { TokenSigner } from '../../../lib/serviceaccount/signer.js';
import type { StoreEvent } from '../store/types.js';
import { guaranteedUpdate } from '../store/types.js';
import type { CoreEnv } from '../env.js';
import { listPrefix, objectKey } from '../keys.js';
import { coreType, deleteStored, WatchingController } from './loop.js';

export class ServiceAccountTokenController extends WatchingController {
  constructor(
    env: CoreEnv,
    private readonly signer: TokenSigner,
    private readonly caPem: string,
    retryMs?: number,
  ) {
    super(env, 'serviceaccount-token', [listPrefix(coreType(env, 'secrets'), ''), listPrefix(coreType(env, 'serviceaccounts'), '')], retryMs);
  }

  protected override onEvent(ev: StoreEvent): void {
    const obj = ev.object;
    if (obj.kind === 'ServiceAccount' || ev.key.startsWith(listPrefix(coreType(this.env, 'serviceaccounts'), ''))) {
      if (ev.type === 'DELETED' || ev.type === 'ADDED')
        this.enqueue(`namespace ${obj.metadata.namespace ?? ''}`, () => this.syncNamespace(obj.metadata.namespace ?? ''));
      return;
    }
    if (ev.type !== 'DELETED' && obj['type'] === SA_TOKEN_SECRET_TYPE) {
      this.enqueue(`secret ${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`, () => this.syncSecret(obj));
    }
  }

  protected async pass(): Promise<undefined> {
    const { items } = await this.env.store.list(listPrefix(coreType(this.env, 'secrets'), ''), { filter: (s) => s['type'] === SA_TOKEN_SECRET_TYPE });
    for (const s of items) await this.syncSecret(s);
    return undefined;
  }

  private async syncNamespace(namespace: string): Promise<void> {
    const { items } = await this.env.store.list(listPrefix(coreType(this.env, 'secrets'), namespace), { filter: (s) => s['type'] === SA_TOKEN_SECRET_TYPE });
    for (const s of items) await this.syncSecret(s);
  }

  private async syncSecret(seen: KObject): Promise<void> {
    if (seen.metadata.deletionTimestamp) return;
    const { env } = this;
    const ns = seen.metadata.namespace ?? '';
    const saName = seen.metadata.annotations?.[SA_NAME_ANNOTATION] ?? '';
    const sa = saName ? await env.store.get(objectKey(coreType(env, 'serviceaccounts'), ns, saName)) : undefined;
    const wantUid = seen.metadata.annotations?.[SA_UID_ANNOTATION];
    const secrets = coreType(env, 'secrets');
    if (!sa || sa.metadata.deletionTimestamp || (wantUid && wantUid !== sa.metadata.uid)) {
      if (await deleteStored(env, secrets, seen))
        env.log(`serviceaccount-token: deleted secret ${ns}/${seen.metadata.name ?? ''}: its service account ${saName} is gone`);
      return;
    }
    const data = isPlainObject(seen['data']) ? seen['data'] : {};
    if (data['token'] && data['ca.crt'] && data['namespace'] && wantUid) return;
    const saRef = { name: saName, uid: sa.metadata.uid ?? '' };
    const token = data['token'] ? undefined : await this.signer.sign(legacyClaims(ns, saRef, seen.metadata.name ?? ''));
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    await guaranteedUpdate(env.store, objectKey(secrets, ns, seen.metadata.name ?? ''), (cur) => {
      if (cur.metadata.uid !== seen.metadata.uid || cur.metadata.deletionTimestamp) return null;
      const d: Record<string, unknown> = isPlainObject(cur['data']) ? { ...cur['data'] } : {};
      if (!d['token']) {
        if (!token) return null; // filled meanwhile by someone else: the next event brings it here again
        d['token'] = b64(token);
      }
      if (!d['ca.crt']) d['ca.crt'] = b64(this.caPem);
      if (!d['namespace']) d['namespace'] = b64(ns);
      const annotations = { ...cur.metadata.annotations, [SA_UID_ANNOTATION]: saRef.uid };
      return { ...cur, metadata: { ...cur.metadata, annotations }, data: d };
    });
  }
}
