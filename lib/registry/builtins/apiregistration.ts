// apiregistration.k8s.io/v1: APIServices, the aggregation layer's routing
// table. The name must be `<version>.<group>` so that one name means one route.
import type { KObject } from '../../api/meta.js';
import { ALL_VERBS, type ResourceType } from '../types.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { at, list, str } from '../fields.js';

/** kube-aggregator's Available column: `True`, `False (Reason)`, or `Unknown` without the condition. */
function available(o: KObject): string {
  const c = list(o, 'status', 'conditions').find((x) => str(x, 'type') === 'Available');
  if (c === undefined) return 'Unknown';
  const status = str(c, 'status');
  if (status === 'True') return 'True';
  return str(c, 'reason') ? `${status} (${str(c, 'reason')})` : status;
}

export const apiservices: ResourceType = {
  group: 'apiregistration.k8s.io',
  version: 'v1',
  kind: 'APIService',
  listKind: 'APIServiceList',
  plural: 'apiservices',
  singular: 'apiservice',
  namespaced: false,
  shortNames: [],
  categories: ['api-extensions'],
  verbs: ALL_VERBS,
  subresources: [{ name: 'status', kind: 'APIService', verbs: ['get', 'patch', 'update'] }],
  nameRule: 'apiservice',
  createOnUpdate: false,
  columns: [
    nameColumn(),
    column('Service', 'The reference to the service that hosts this API endpoint.', (o) =>
      at(o, 'spec', 'service') ? `${str(o, 'spec', 'service', 'namespace')}/${str(o, 'spec', 'service', 'name')}` : 'Local',
    ),
    column('Available', 'Whether this service is available.', available),
    ageColumn(),
  ],
  fieldSelectors: {},
};

export const APIREGISTRATION_TYPES: readonly ResourceType[] = [apiservices];
