// The core group's pod-template kinds: ReplicationControllers (with scale and
// status) and PodTemplates, as kube-apiserver 1.33 serves them
// (pkg/registry/core/replicationcontroller, podtemplate; core/v1 defaults).
// As for apps/v1, no controller acts on them.
import { isPlainObject, type KObject } from '../../api/meta.js';
import { cause } from '../../api/status.js';
import type { Column, ResourceType, ScalePaths, Subresource, Verb } from '../types.js';
import { at, list, record, str } from '../fields.js';
import { column, nameColumn } from '../columns.js';
import { core } from './core.js';
import { REPLICATIONCONTROLLER_COLUMNS } from './apps-printers.js';
import { formatLabels } from './core-printers.js';
import { validatePodSpec } from './core-validation.js';
import { defaultPodSpec, defaultPodTemplate } from './pod-defaults.js';
import { nonNegative, validateReplicationController } from './workload-validation.js';

const SUB_VERBS: readonly Verb[] = ['get', 'patch', 'update'];
const SCALE: Subresource = { name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: SUB_VERBS };

/** labels.SelectorFromSet(spec.selector).String(): `k=v` pairs sorted by key. */
const RC_SCALE: ScalePaths = {
  specReplicasPath: '.spec.replicas',
  statusReplicasPath: '.status.replicas',
  selector: (o) =>
    Object.entries(record(o, 'spec', 'selector'))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(','),
};

export const replicationcontrollers = core('ReplicationController', 'replicationcontrollers', {
  namespaced: true,
  shortNames: ['rc'],
  categories: ['all'],
  generation: 'spec',
  subresources: [SCALE, { name: 'status', kind: 'ReplicationController', verbs: SUB_VERBS }],
  scale: RC_SCALE,
  columns: REPLICATIONCONTROLLER_COLUMNS,
  // SetDefaults_ReplicationController: the selector and the object's labels come from the template's labels when empty.
  defaults(obj) {
    if (!isPlainObject(obj['spec'])) obj['spec'] = {};
    const spec = obj['spec'] as Record<string, unknown>;
    const labels = at(spec, 'template', 'metadata', 'labels');
    if (isPlainObject(labels)) {
      if (Object.keys(record(spec, 'selector')).length === 0) spec['selector'] = { ...labels };
      if (Object.keys(obj.metadata.labels ?? {}).length === 0) obj.metadata.labels = { ...(labels as Record<string, string>) };
    }
    if (spec['replicas'] === undefined || spec['replicas'] === null) spec['replicas'] = 1;
    defaultPodTemplate(spec);
  },
  validate: (obj) => [...validateReplicationController(obj), ...nonNegative(obj, 'spec.minReadySeconds', 'spec', 'minReadySeconds')],
});

const templateContainers = (o: KObject) => list(o, 'template', 'spec', 'containers');

/** printPodTemplate: every column shown without -o wide. */
const PODTEMPLATE_COLUMNS: readonly Column[] = [
  nameColumn(),
  column('Containers', 'Names of each container in the template.', (o) =>
    templateContainers(o)
      .map((c) => str(c, 'name'))
      .join(','),
  ),
  column('Images', 'Images referenced by each container in the template.', (o) =>
    templateContainers(o)
      .map((c) => str(c, 'image'))
      .join(','),
  ),
  column('Pod Labels', 'The labels for the pod template.', (o) => formatLabels(record(o, 'template', 'metadata', 'labels'))),
];

export const podtemplates = core('PodTemplate', 'podtemplates', {
  namespaced: true,
  // podTemplateStrategy: 1 on create, one more whenever the template changes.
  generation: 'spec',
  columns: PODTEMPLATE_COLUMNS,
  defaults(obj) {
    if (isPlainObject(obj['template'])) defaultPodSpec(obj['template']['spec']);
  },
  validate(obj) {
    if (!isPlainObject(obj['template'])) return [cause.required('template')];
    return validatePodSpec(obj['template']['spec'], 'template.spec');
  },
});

export const CORE_WORKLOAD_TYPES: readonly ResourceType[] = [podtemplates, replicationcontrollers];
