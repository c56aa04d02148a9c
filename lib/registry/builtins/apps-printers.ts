// Tables of apps/v1 and the replica-keeping core kinds, after kube's printers
// (pkg/printers/internalversion/printers.go): same columns, same cells.
// Descriptions are the field docs kube's printers quote, read from the
// generated schema tables so they are written down once.
import type { KObject } from '../../api/meta.js';
import { appsV1 } from '../../schema/gen/apps-v1.js';
import { coreV1 } from '../../schema/gen/core-v1.js';
import type { Column } from '../types.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { at, list, num, record, str } from '../fields.js';
import { formatLabels } from './core-printers.js';
import { formatLabelSelector } from './selector-text.js';

/** A field's description in the apps/v1 table (`DeploymentStatus`, `updatedReplicas`). */
const doc = (type: string, field: string): string => appsV1.types[type]?.f[field]?.[1] ?? '';
const coreDoc = (type: string, field: string): string => coreV1.types[type]?.f[field]?.[1] ?? '';

/** layoutContainerCells: the container names and images of the pod template at `template`, comma-joined (-o wide). */
export function containerColumns(...template: string[]): Column[] {
  const containers = (o: KObject) => list(o, ...template, 'spec', 'containers');
  return [
    column(
      'Containers',
      'Names of each container in the template.',
      (o) =>
        containers(o)
          .map((c) => str(c, 'name'))
          .join(','),
      { priority: 1 },
    ),
    column(
      'Images',
      'Images referenced by each container in the template.',
      (o) =>
        containers(o)
          .map((c) => str(c, 'image'))
          .join(','),
      { priority: 1 },
    ),
  ];
}

export const CONTAINER_COLUMNS: readonly Column[] = containerColumns('spec', 'template');

const selectorColumn = (description: string): Column => column('Selector', description, (o) => formatLabelSelector(at(o, 'spec', 'selector')), { priority: 1 });
const int = (name: string, description: string, ...path: string[]): Column => column(name, description, (o) => num(o, ...path), { type: 'integer' });
/** `%d/%d` of ready over desired replicas (spec.replicas, 0 when unset). */
const ready = (o: KObject) => `${num(o, 'status', 'readyReplicas')}/${num(o, 'spec', 'replicas')}`;

export const DEPLOYMENT_COLUMNS: readonly Column[] = [
  nameColumn(),
  column('Ready', 'Number of the pod with ready state', ready),
  column('Up-to-date', doc('DeploymentStatus', 'updatedReplicas'), (o) => num(o, 'status', 'updatedReplicas')),
  column('Available', doc('DeploymentStatus', 'availableReplicas'), (o) => num(o, 'status', 'availableReplicas')),
  ageColumn(),
  ...CONTAINER_COLUMNS,
  selectorColumn(doc('DeploymentSpec', 'selector')),
];

export const REPLICASET_COLUMNS: readonly Column[] = [
  nameColumn(),
  int('Desired', doc('ReplicaSetSpec', 'replicas'), 'spec', 'replicas'),
  int('Current', doc('ReplicaSetStatus', 'replicas'), 'status', 'replicas'),
  int('Ready', doc('ReplicaSetStatus', 'readyReplicas'), 'status', 'readyReplicas'),
  ageColumn(),
  ...CONTAINER_COLUMNS,
  selectorColumn(doc('ReplicaSetSpec', 'selector')),
];

export const STATEFULSET_COLUMNS: readonly Column[] = [
  nameColumn(),
  column('Ready', 'Number of the pod with ready state', ready),
  ageColumn(),
  ...CONTAINER_COLUMNS,
];

const dsInt = (name: string, field: string) => int(name, doc('DaemonSetStatus', field), 'status', field);

export const DAEMONSET_COLUMNS: readonly Column[] = [
  nameColumn(),
  dsInt('Desired', 'desiredNumberScheduled'),
  dsInt('Current', 'currentNumberScheduled'),
  dsInt('Ready', 'numberReady'),
  dsInt('Up-to-date', 'updatedNumberScheduled'),
  dsInt('Available', 'numberAvailable'),
  column('Node Selector', 'The node selector of the pod template', (o) => formatLabels(record(o, 'spec', 'template', 'spec', 'nodeSelector'))),
  ageColumn(),
  ...CONTAINER_COLUMNS,
  selectorColumn(doc('DaemonSetSpec', 'selector')),
];

/** The controlling owner as `kind.group/name` in lower case (formatResourceName), `<none>` without one. */
function controllerOf(o: KObject): string {
  const ref = list(o, 'metadata', 'ownerReferences').find((r) => at(r, 'controller') === true);
  if (!ref) return '<none>';
  const apiVersion = str(ref, 'apiVersion');
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  const kind = str(ref, 'kind');
  return `${(group ? `${kind}.${group}` : kind).toLowerCase()}/${str(ref, 'name')}`;
}

export const CONTROLLERREVISION_COLUMNS: readonly Column[] = [
  nameColumn(),
  column('Controller', 'Controller of the object', controllerOf),
  int('Revision', doc('ControllerRevision', 'revision'), 'revision'),
  ageColumn(),
];

/** A ReplicationController's selector is a plain map. */
export const REPLICATIONCONTROLLER_COLUMNS: readonly Column[] = [
  nameColumn(),
  int('Desired', coreDoc('ReplicationControllerSpec', 'replicas'), 'spec', 'replicas'),
  int('Current', coreDoc('ReplicationControllerStatus', 'replicas'), 'status', 'replicas'),
  int('Ready', coreDoc('ReplicationControllerStatus', 'readyReplicas'), 'status', 'readyReplicas'),
  ageColumn(),
  ...CONTAINER_COLUMNS,
  column('Selector', coreDoc('ReplicationControllerSpec', 'selector'), (o) => formatLabels(record(o, 'spec', 'selector')), {
    priority: 1,
  }),
];
