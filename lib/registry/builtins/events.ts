// events.k8s.io/v1: the Event API for new clients. kube-apiserver stores these
// as core Events, so the table and the selectable fields are the core ones
// under this version's field names (pkg/apis/events/v1/conversion.go).
import type { KObject } from '../../api/meta.js';
import { ALL_VERBS, type ResourceType } from '../types.js';
import { str } from '../fields.js';
import { eventColumns, eventsV1View } from './event-printer.js';
import { validateEventsV1 } from './event-validation.js';

const regarding =
  (field: string) =>
  (o: KObject): string =>
    str(o, 'regarding', field);

export const eventsV1Event: ResourceType = {
  group: 'events.k8s.io',
  version: 'v1',
  kind: 'Event',
  listKind: 'EventList',
  plural: 'events',
  singular: 'event',
  namespaced: true,
  shortNames: ['ev'],
  categories: [],
  verbs: ALL_VERBS,
  subresources: [],
  nameRule: 'subdomain',
  // The core event strategy (shared by both APIs) allows create on update.
  createOnUpdate: true,
  columns: eventColumns(eventsV1View),
  fieldSelectors: {
    'regarding.kind': regarding('kind'),
    'regarding.namespace': regarding('namespace'),
    'regarding.name': regarding('name'),
    'regarding.uid': regarding('uid'),
    'regarding.apiVersion': regarding('apiVersion'),
    'regarding.resourceVersion': regarding('resourceVersion'),
    'regarding.fieldPath': regarding('fieldPath'),
    reason: (o) => str(o, 'reason'),
    reportingController: (o) => str(o, 'reportingController'),
    // Kept by kube for old selectors although this version has no source field any more.
    source: (o) => str(o, 'deprecatedSource', 'component'),
    type: (o) => str(o, 'type'),
  },
  validate: validateEventsV1,
  storageVersion: { group: '', version: 'v1', kind: 'Event' },
};

export const EVENTS_TYPES: readonly ResourceType[] = [eventsV1Event];
