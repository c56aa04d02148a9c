// flowcontrol.apiserver.k8s.io/v1: API Priority and Fairness. FlowSchemas
// classify requests into PriorityLevelConfigurations, whose concurrency
// shares and queues the gateway's dispatcher (gateway/flowcontrol) enforces.
import type { KObject } from '../../api/meta.js';
import { ALL_VERBS, type ResourceType } from '../types.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { at, list, str } from '../fields.js';
import { defaultFlowSchema, defaultPriorityLevel, validateFlowSchema, validatePriorityLevel } from './flowcontrol-validation.js';

const GROUP = 'flowcontrol.apiserver.k8s.io';

/** kube's MissingPL cell: the Dangling condition's status, `?` before anyone judged it. */
function missingPL(o: KObject): string {
  const c = list(o, 'status', 'conditions').find((x) => str(x, 'type') === 'Dangling');
  return c === undefined ? '?' : str(c, 'status');
}

/** A number from the object, or kube's `<none>` when the level has no such setting. */
function numOrNone(o: KObject, ...path: string[]): string | number {
  const v = at(o, ...path);
  return typeof v === 'number' ? v : '<none>';
}

export const flowschemas: ResourceType = {
  group: GROUP,
  version: 'v1',
  kind: 'FlowSchema',
  listKind: 'FlowSchemaList',
  plural: 'flowschemas',
  singular: 'flowschema',
  namespaced: false,
  shortNames: [],
  categories: [],
  verbs: ALL_VERBS,
  subresources: [{ name: 'status', kind: 'FlowSchema', verbs: ['get', 'patch', 'update'] }],
  nameRule: 'subdomain',
  createOnUpdate: false,
  generation: 'spec',
  columns: [
    nameColumn(),
    column('PriorityLevel', 'Name of the priority level configuration referenced by this FlowSchema.', (o) =>
      str(o, 'spec', 'priorityLevelConfiguration', 'name'),
    ),
    column('MatchingPrecedence', 'Matching precedence of the FlowSchema.', (o) => numOrNone(o, 'spec', 'matchingPrecedence')),
    column('DistinguisherMethod', 'Method of distinguishing flows in this FlowSchema.', (o) => str(o, 'spec', 'distinguisherMethod', 'type') || '<none>'),
    ageColumn(),
    column('MissingPL', 'Whether the priority level configuration referenced by this FlowSchema exists.', missingPL),
  ],
  fieldSelectors: {},
  defaults: defaultFlowSchema,
  validate: validateFlowSchema,
};

export const prioritylevelconfigurations: ResourceType = {
  group: GROUP,
  version: 'v1',
  kind: 'PriorityLevelConfiguration',
  listKind: 'PriorityLevelConfigurationList',
  plural: 'prioritylevelconfigurations',
  singular: 'prioritylevelconfiguration',
  namespaced: false,
  shortNames: [],
  categories: [],
  verbs: ALL_VERBS,
  subresources: [{ name: 'status', kind: 'PriorityLevelConfiguration', verbs: ['get', 'patch', 'update'] }],
  nameRule: 'subdomain',
  createOnUpdate: false,
  generation: 'spec',
  columns: [
    nameColumn(),
    column('Type', 'Type of the priority level, either Exempt or Limited.', (o) => str(o, 'spec', 'type')),
    column('NominalConcurrencyShares', 'Nominal concurrency shares of the priority level (Limited only).', (o) =>
      numOrNone(o, 'spec', 'limited', 'nominalConcurrencyShares'),
    ),
    column('Queues', 'Number of queues (Limited with queuing only).', (o) => numOrNone(o, 'spec', 'limited', 'limitResponse', 'queuing', 'queues')),
    column('HandSize', 'Hand size of the shuffle sharding (Limited with queuing only).', (o) =>
      numOrNone(o, 'spec', 'limited', 'limitResponse', 'queuing', 'handSize'),
    ),
    column('QueueLengthLimit', 'Length limit of each queue (Limited with queuing only).', (o) =>
      numOrNone(o, 'spec', 'limited', 'limitResponse', 'queuing', 'queueLengthLimit'),
    ),
    ageColumn(),
  ],
  fieldSelectors: {},
  defaults: defaultPriorityLevel,
  validate: validatePriorityLevel,
};

export const FLOWCONTROL_TYPES: readonly ResourceType[] = [flowschemas, prioritylevelconfigurations];
