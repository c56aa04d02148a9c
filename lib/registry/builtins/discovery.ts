// discovery.k8s.io/v1: EndpointSlices.
import type { KObject } from '../../api/meta.js';
import { ALL_VERBS, type ResourceType } from '../types.js';
import { ageColumn, column, nameColumn } from '../columns.js';
import { at, list, num, str } from '../fields.js';
import { firstThree } from './core-printers.js';

/** formatDiscoveryPorts: the port number, else its name, else `*`. */
function ports(o: KObject): string {
  const all = list(o, 'ports').map((p) => (at(p, 'port') !== undefined && at(p, 'port') !== null ? String(num(p, 'port')) : str(p, 'name') || '*'));
  return firstThree(all, all.length, '<unset>');
}

function endpoints(o: KObject): string {
  const all = list(o, 'endpoints').flatMap((e) => list(e, 'addresses').filter((a): a is string => typeof a === 'string'));
  return firstThree(all, all.length, '<unset>');
}

export const endpointslices: ResourceType = {
  group: 'discovery.k8s.io',
  version: 'v1',
  kind: 'EndpointSlice',
  listKind: 'EndpointSliceList',
  plural: 'endpointslices',
  singular: 'endpointslice',
  namespaced: true,
  shortNames: [],
  categories: [],
  verbs: ALL_VERBS,
  subresources: [],
  nameRule: 'subdomain',
  createOnUpdate: false,
  generation: 'spec-and-labels',
  columns: [
    nameColumn(),
    column('AddressType', 'addressType specifies the type of address carried by this EndpointSlice.', (o) => str(o, 'addressType')),
    column('Ports', 'ports specifies the list of network ports exposed by each endpoint in this slice.', ports),
    column('Endpoints', 'endpoints is a list of unique endpoints in this slice.', endpoints),
    ageColumn(),
  ],
  fieldSelectors: {},
};

export const DISCOVERY_TYPES: readonly ResourceType[] = [endpointslices];
