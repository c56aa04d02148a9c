// What kube-controller-manager puts into every namespace, so that the
// everyday commands work on a new namespace as on a cluster:
// - `serviceaccount`: the ServiceAccount `default` (pods and
//   `kubectl create token default` use it); recreated when deleted.
// - `root-ca-cert-publisher`: the ConfigMap `kube-root-ca.crt` holding the
//   cluster CA (`ca.crt`), which in-cluster clients mount to verify the API;
//   recreated when deleted, and put back when its data or description
//   annotation was changed, as kube's. Both run on the leader only
//   (leaderelection/): two processes with different CAs (a rotation, or
//   separate dev PKIs) would otherwise rewrite it back and forth for ever.
// Namespaces being deleted (Terminating) get nothing new.
import type { KObject } from '../../../lib/api/meta.js';
import type { ResourceType } from '../../../lib/registry/types.js';
import type { CoreEnv } from '../env.js';
import { listPrefix, objectKey } from '../keys.js';
import { prepareUpdate } from '../objects.js';
import { guaranteedUpdate, type StoreEvent } from '../store/types.js';
import { coreType, getOrCreate, WatchingController } from './loop.js';

export const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';
const DESCRIPTION_ANNOTATION = 'kubernetes.io/description';
const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';

/** One object kept in every active namespace; subclasses say which and how it must look. */
abstract class PerNamespaceController extends WatchingController {
  protected readonly namespaces: ResourceType;
  protected readonly kept: ResourceType;
  /** The namespaces' key prefix, made once: every write of the kept type (every ConfigMap's) is told apart by it. */
  private readonly namespacePrefix: string;

  constructor(
    env: CoreEnv,
    name: string,
    keptResource: string,
    protected readonly keptName: string,
    retryMs?: number,
  ) {
    const namespaces = coreType(env, 'namespaces');
    const kept = coreType(env, keptResource);
    super(env, name, [listPrefix(namespaces, ''), listPrefix(kept, '')], retryMs);
    this.namespaces = namespaces;
    this.kept = kept;
    this.namespacePrefix = listPrefix(namespaces, '');
  }

  /** The object to create in `namespace`. */
  protected abstract desired(namespace: string): KObject;

  /** The kept object repaired, or null when it is as it must be (the default: any content will do). */
  protected repaired(_current: KObject): KObject | null {
    return null;
  }

  protected override onEvent(ev: StoreEvent): void {
    const o = ev.object;
    const isNamespace = ev.key.startsWith(this.namespacePrefix);
    if (isNamespace && ev.type === 'DELETED') return;
    if (!isNamespace && o.metadata.name !== this.keptName) return;
    const ns = isNamespace ? (o.metadata.name ?? '') : (o.metadata.namespace ?? '');
    this.enqueue(`namespace ${ns}`, () => this.sync(ns));
  }

  protected async pass(): Promise<undefined> {
    const { items } = await this.env.store.list(listPrefix(this.namespaces, ''));
    for (const ns of items) await this.sync(ns.metadata.name ?? '');
    return undefined;
  }

  private async sync(namespace: string): Promise<void> {
    const ns = await this.env.store.get(objectKey(this.namespaces, '', namespace));
    if (!ns || ns.metadata.deletionTimestamp || (ns['status'] as { phase?: string } | undefined)?.phase === 'Terminating') return;
    const key = objectKey(this.kept, namespace, this.keptName);
    const current = await getOrCreate(this.env, this.kept, key, this.desired(namespace));
    if (!current || this.repaired(current) === null) return;
    let putBack = false;
    await guaranteedUpdate(this.env.store, key, (cur) => {
      const next = this.repaired(cur);
      putBack = next !== null;
      return next === null ? null : (prepareUpdate(this.kept, next, cur, 'main', undefined, this.env.clock()) ?? null);
    });
    if (putBack) this.env.log(`${this.name}: put back ${namespace}/${this.keptName}`);
  }
}

/** kube-controller-manager's `serviceaccount` controller. */
export class DefaultServiceAccountController extends PerNamespaceController {
  constructor(env: CoreEnv, retryMs?: number) {
    super(env, 'serviceaccount', 'serviceaccounts', 'default', retryMs);
  }

  protected desired(namespace: string): KObject {
    return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default', namespace } };
  }
}

/** kube-controller-manager's `root-ca-cert-publisher`. */
export class RootCaPublisher extends PerNamespaceController {
  constructor(
    env: CoreEnv,
    private readonly caPem: string,
    retryMs?: number,
  ) {
    super(env, 'root-ca-cert-publisher', 'configmaps', ROOT_CA_CONFIGMAP, retryMs);
  }

  protected desired(namespace: string): KObject {
    return {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: ROOT_CA_CONFIGMAP, namespace, annotations: { [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION } },
      data: { 'ca.crt': this.caPem },
    };
  }

  /** kube's publisher: the data must be exactly the CA, and the description annotation present. */
  protected override repaired(current: KObject): KObject | null {
    const data = current['data'] as Record<string, unknown> | undefined;
    const keys = data ? Object.keys(data) : [];
    const dataRight = keys.length === 1 && keys[0] === 'ca.crt' && data!['ca.crt'] === this.caPem;
    const annotations = current.metadata.annotations ?? {};
    const described = Object.hasOwn(annotations, DESCRIPTION_ANNOTATION) && annotations[DESCRIPTION_ANNOTATION] !== '';
    if (dataRight && described) return null;
    const next = structuredClone(current) as KObject;
    delete next.metadata.resourceVersion;
    next['data'] = { 'ca.crt': this.caPem };
    next.metadata.annotations = { ...annotations, [DESCRIPTION_ANNOTATION]: ROOT_CA_DESCRIPTION };
    return next;
  }
}
