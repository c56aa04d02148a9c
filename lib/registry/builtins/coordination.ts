// coordination.k8s.io/v1: Leases (leader election, node heartbeats).
import { ALL_VERBS, type ResourceType } from '../types.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { str } from '../fields.js';

export const leases: ResourceType = {
  group: 'coordination.k8s.io',
  version: 'v1',
  kind: 'Lease',
  listKind: 'LeaseList',
  plural: 'leases',
  singular: 'lease',
  namespaced: true,
  shortNames: [],
  categories: [],
  verbs: ALL_VERBS,
  subresources: [],
  nameRule: 'subdomain',
  // Heartbeats PUT their Lease whether or not it exists yet.
  createOnUpdate: true,
  columns: [
    nameColumn(),
    column('Holder', 'holderIdentity contains the identity of the holder of a current lease.', (o) => str(o, 'spec', 'holderIdentity')),
    ageColumn(),
  ],
  fieldSelectors: {},
};

export const COORDINATION_TYPES: readonly ResourceType[] = [leases];
