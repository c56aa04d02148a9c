// The shape of one served resource type. Discovery, Table output, field
// selectors, name rules and type-specific validation all derive from these
// entries (DESIGN.md section 6); nothing else repeats their facts.
import type { KObject, UserInfo } from '../api/meta.js';
import type { StatusCause } from '../api/status.js';
import type { StructNode } from '../schema/model.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export const ALL_VERBS: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

/** How metadata.name is checked, after apimachinery's validators. */
export type NameRule =
  | 'subdomain' // DNS-1123 subdomain (most types)
  | 'label' // DNS-1123 label (namespaces)
  | 'dns1035' // DNS-1035 label (services)
  | 'path-segment' // any name that is a valid path segment (RBAC types)
  | 'apiservice' // `<version>.<group>` (APIService)
  | 'crd'; // a DNS-1123 subdomain equal to `<spec.names.plural>.<spec.group>` (CustomResourceDefinition)

export interface Column {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  format?: string;
  description: string;
  /** 0 = always shown; 1 = shown with -o wide. */
  priority: 0 | 1;
  /** The cell of one row; `now` is the time of the response (for ages). null = no value (kubectl prints `<none>`). */
  cell(obj: KObject, now: number): string | number | boolean | null;
}

export interface Subresource {
  name: string; // 'status', 'finalize'
  kind: string; // kind returned (usually the parent kind)
  verbs: readonly Verb[];
  /** Group and version of `kind` when not the parent's (serviceaccounts/token → authentication.k8s.io/v1 TokenRequest). */
  group?: string;
  version?: string;
}

export interface ResourceType {
  group: string; // '' = core
  version: string;
  kind: string;
  listKind: string;
  plural: string;
  singular: string;
  namespaced: boolean;
  shortNames: readonly string[];
  categories: readonly string[];
  verbs: readonly Verb[];
  subresources: readonly Subresource[];
  nameRule: NameRule;
  /** PUT of a missing object creates it. */
  createOnUpdate: boolean;
  /**
   * metadata.generation as the type's kube registry strategy keeps it: absent,
   * the type has none (ConfigMap, Secret, ServiceAccount, RBAC, Namespace,
   * Service, Node, Event, Lease, …); 'spec': 1 on create, one more on every
   * write that changes anything but metadata and status (Pod since 1.33, custom
   * resources with a status subresource); 'spec-and-labels': label changes count too
   * (EndpointSlice); 'all-but-metadata': any change outside metadata, status included
   * (custom resources without a status subresource: kube's customResourceStrategy).
   */
  generation?: 'spec' | 'spec-and-labels' | 'all-but-metadata';
  /** DELETE answers with the removed object instead of a Success Status (pods, services, namespaces, PVs, PVCs). */
  returnsDeletedObject?: boolean;
  /** Table columns; absent = the default Name / Created At. */
  columns?: readonly Column[];
  /** Field-selector fields beyond metadata.name and metadata.namespace, with how to read them. */
  fieldSelectors: Readonly<Record<string, (obj: KObject) => string>>;
  /** Sets server defaults on create (for example a namespace's phase). */
  defaults?(obj: KObject): void;
  /**
   * kube's strategy PrepareForCreate beyond defaults: fields the server sets from the
   * requester (a CertificateSigningRequest's username, uid, groups and extra).
   */
  prepareForCreate?(obj: KObject, user: UserInfo | undefined): void;
  /**
   * kube's strategy PrepareForUpdate for what the generic rules do not cover: `next`
   * is the object to store for the update path `target` ('main', 'status', or another
   * subresource such as 'approval', whose `next` starts from old with the request's status).
   */
  prepareForUpdate?(next: KObject, old: KObject, target: string, now: number): void;
  /** Type-specific validation of a new object (old = the stored one on update, `target` its update path as in prepareForUpdate). */
  validate?(obj: KObject, old: KObject | undefined, target?: string): StatusCause[];
  /**
   * The costly part of `validate`, run first where a promise may be awaited (CustomResourceDefinitions:
   * their schemas' patterns and CEL rules, on a worker thread; CertificateSigningRequests: the request's
   * parse, its P-256 key imported by WebCrypto): the core write path awaits it on the object it is
   * about to prepare, and `validate` then finds its result. Rejects with the Status to answer.
   */
  prevalidate?(obj: KObject, old: KObject | undefined): Promise<void>;
  /**
   * The group/version/kind kube-apiserver stores this type as, when not its own
   * (events.k8s.io Events are core Events). Only discovery's storageVersionHash reads it.
   */
  storageVersion?: { group: string; version: string; kind: string };
  /**
   * 'gateway' = a virtual type the gateway answers itself (TokenReview, SelfSubjectReview):
   * never stored, no storage version; dispatch routes it before any backend.
   */
  servedBy?: 'gateway';
  /**
   * Never stored: the core backend answers get and list from live checks (ComponentStatuses),
   * so there is no storage version hash, nothing to count and nothing to collect.
   */
  computed?: true;
  /**
   * The structural schema of the kind (lib/schema), with its merge markers: field
   * validation, strategic merge patch and OpenAPI read it. Absent = no schema
   * (strategic merge patch is refused, every field is accepted).
   */
  schema?: StructNode;
  /**
   * The kind's schema as published in /openapi/v2 and /openapi/v3 when it is not
   * generated from `schema` (custom resources: the CRD version's openAPIV3Schema).
   */
  openapi?: Readonly<Record<string, unknown>>;
  /** The scale subresource's paths (custom resources with `subresources.scale`, the built-in workloads). */
  scale?: ScalePaths;
  /** The CustomResourceDefinition this type comes from (metadata.name), for custom resources. */
  crd?: string;
  /**
   * Built-in kinds served in several versions over one storage (HorizontalPodAutoscalers in
   * autoscaling/v1 and v2): the object in another of the kind's versions, converted in process
   * as kube's scheme converts it. Objects are stored in `storageVersion`; never writes into `obj`.
   */
  convert?(obj: KObject, apiVersion: string): KObject;
  /** Custom resources whose schema has defaults: applied to objects read from storage too, as kube's decoding does. */
  readDefaults?(obj: KObject): void;
  /**
   * Custom resources of a CRD with conversion strategy Webhook: objects are kept in
   * the storage version, and another version is converted by the CRD's webhook.
   */
  conversionWebhook?: ConversionWebhookConfig;
  /**
   * Custom resources: every version of the CRD (served or not) by apiVersion, with
   * its schema node. Server-side apply compares owners recorded in another
   * version in theirs; a version not here is one objects cannot be converted to.
   */
  versionSchemas?: ReadonlyMap<string, StructNode | undefined>;
  /** Custom resources of a CRD being deleted: creates are refused (405), everything else is served until the objects are gone. */
  terminating?: boolean;
  /**
   * Custom resources of a version marked `deprecated`: the Warning every request through it gets (the
   * version's deprecationWarning, else kube's default text); dispatch also sets the deprecated-API gauge
   * and the `k8s.io/deprecated` audit annotation, as kube's CRD handler does.
   */
  deprecationWarning?: string;
}

/** spec.conversion.webhook of a CRD, read once (lib/crd/conversionwebhook.ts calls it). */
export interface ConversionWebhookConfig {
  /** clientConfig.url, or */
  readonly url?: string;
  /** clientConfig.service (port defaulted to 443, path to "/"). */
  readonly service?: { readonly namespace: string; readonly name: string; readonly path: string; readonly port: number };
  /** clientConfig.caBundle decoded (PEM); absent = the system roots. */
  readonly caPem?: string;
  readonly reviewVersions: readonly string[];
}

/** Where a custom resource keeps what autoscaling/v1 Scale shows (simple JSON paths, `.spec.replicas`). */
export interface ScalePaths {
  readonly specReplicasPath: string;
  readonly statusReplicasPath: string;
  readonly labelSelectorPath?: string;
  /** Built-in kinds: status.selector computed from the object (a Deployment's structured spec.selector as text). */
  readonly selector?: (obj: KObject) => string | undefined;
}

export function apiVersionOf(t: Pick<ResourceType, 'group' | 'version'>): string {
  return t.group ? `${t.group}/${t.version}` : t.version;
}
