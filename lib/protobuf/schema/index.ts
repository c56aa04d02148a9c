// Every table, and which apiVersion/kind is served by which message.
import { apiregistrationV1 } from './apiregistration-v1.js';
import { appsV1 } from './apps-v1.js';
import { autoscalingV1 } from './autoscaling-v1.js';
import { autoscalingV2 } from './autoscaling-v2.js';
import { batchV1 } from './batch-v1.js';
import { networkingV1 } from './networking-v1.js';
import { policyV1 } from './policy-v1.js';
import { schedulingV1 } from './scheduling-v1.js';
import { storageV1 } from './storage-v1.js';
import { nodeV1 } from './node-v1.js';
import { schedulingV1alpha3 } from './scheduling-v1alpha3.js';
import { authenticationV1 } from './authentication-v1.js';
import { authorizationV1 } from './authorization-v1.js';
import { certificatesV1 } from './certificates-v1.js';
import { coordinationV1 } from './coordination-v1.js';
import { coreV1 } from './core-v1.js';
import { discoveryV1 } from './discovery-v1.js';
import { apidiscoveryV2 } from './apidiscovery-v2.js';
import { eventsV1 } from './events-v1.js';
import { intstr } from './intstr.js';
import { metaV1 } from './meta-v1.js';
import { resource } from './resource.js';
import { runtime } from './runtime.js';
import { rbacV1 } from './rbac-v1.js';
import type { PackageSchema } from './types.js';

export const PACKAGES: readonly PackageSchema[] = [
  metaV1,
  runtime,
  intstr,
  resource,
  coreV1,
  appsV1,
  autoscalingV1,
  autoscalingV2,
  batchV1,
  policyV1,
  networkingV1,
  schedulingV1,
  storageV1,
  nodeV1,
  schedulingV1alpha3,
  eventsV1,
  coordinationV1,
  discoveryV1,
  apidiscoveryV2,
  rbacV1,
  apiregistrationV1,
  authenticationV1,
  authorizationV1,
  certificatesV1,
];

const withLists = (kinds: string[]) => [...kinds, ...kinds.map((k) => `${k}List`)];

/** apiVersion → table alias and the kinds it serves (each kind is a message of that name). */
export const KINDS: Readonly<Record<string, { alias: string; kinds: readonly string[] }>> = {
  v1: {
    alias: 'core',
    kinds: withLists([
      'Namespace',
      'ConfigMap',
      'Secret',
      'ServiceAccount',
      'Pod',
      'Node',
      'Service',
      'Endpoints',
      'Event',
      'PersistentVolume',
      'PersistentVolumeClaim',
      'PodTemplate',
      'ReplicationController',
      'LimitRange',
      'ResourceQuota',
      'ComponentStatus',
    ]),
  },
  'apps/v1': { alias: 'apps', kinds: withLists(['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet', 'ControllerRevision']) },
  'autoscaling/v1': { alias: 'autoscaling', kinds: ['Scale', ...withLists(['HorizontalPodAutoscaler'])] },
  'autoscaling/v2': { alias: 'autoscalingV2', kinds: withLists(['HorizontalPodAutoscaler']) },
  'batch/v1': { alias: 'batch', kinds: withLists(['Job', 'CronJob']) },
  'storage.k8s.io/v1': { alias: 'storage', kinds: withLists(['StorageClass', 'CSIDriver', 'CSINode', 'CSIStorageCapacity', 'VolumeAttachment']) },
  'node.k8s.io/v1': { alias: 'node', kinds: withLists(['RuntimeClass']) },
  'scheduling.k8s.io/v1': { alias: 'scheduling', kinds: withLists(['PriorityClass']) },
  'policy/v1': { alias: 'policy', kinds: withLists(['PodDisruptionBudget']) },
  'networking.k8s.io/v1': { alias: 'networking', kinds: withLists(['Ingress', 'IngressClass', 'NetworkPolicy']) },
  'events.k8s.io/v1': { alias: 'events', kinds: withLists(['Event']) },
  'coordination.k8s.io/v1': { alias: 'coordination', kinds: withLists(['Lease']) },
  'discovery.k8s.io/v1': { alias: 'discovery', kinds: withLists(['EndpointSlice']) },
  // Aggregated discovery (served by the gateway as `application/vnd.kubernetes.protobuf;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`).
  'apidiscovery.k8s.io/v2': { alias: 'apidiscovery', kinds: ['APIGroupDiscoveryList'] },
  'rbac.authorization.k8s.io/v1': { alias: 'rbac', kinds: withLists(['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding']) },
  'apiregistration.k8s.io/v1': { alias: 'apiregistration', kinds: withLists(['APIService']) },
  'authentication.k8s.io/v1': { alias: 'authentication', kinds: ['TokenRequest', 'TokenReview', 'SelfSubjectReview'] },
  'authorization.k8s.io/v1': {
    alias: 'authorization',
    kinds: ['SubjectAccessReview', 'SelfSubjectAccessReview', 'LocalSubjectAccessReview', 'SelfSubjectRulesReview'],
  },
  'certificates.k8s.io/v1': { alias: 'certificates', kinds: withLists(['CertificateSigningRequest']) },
  'meta.k8s.io/v1': { alias: 'meta', kinds: ['Status', 'DeleteOptions', 'PartialObjectMetadata', 'PartialObjectMetadataList'] },
};

/**
 * meta/v1 kinds that the apiserver registers into every group version
 * (metav1.AddToGroupVersion), so `apps/v1 DeleteOptions` or `v1 Status` decode too.
 */
export const META_KINDS: readonly string[] = ['Status', 'DeleteOptions'];
