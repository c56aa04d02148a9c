// The sample backend's one API group: samples.gatehouse.dev/v1 Widgets
// (namespaced, with a status subresource), described for lib/registry like
// every built-in type, so the core backend's machinery serves it unchanged.
import { ALL_VERBS, type ResourceType } from '../../lib/registry/types.js';
import { ageColumn, column, nameColumn } from '../../lib/registry/columns.js';
import { str } from '../../lib/registry/fields.js';

export const SAMPLE_GROUP = 'samples.gatehouse.dev';
export const SAMPLE_VERSION = 'v1';

export const widgets: ResourceType = {
  group: SAMPLE_GROUP,
  version: SAMPLE_VERSION,
  kind: 'Widget',
  listKind: 'WidgetList',
  plural: 'widgets',
  singular: 'widget',
  namespaced: true,
  shortNames: ['wdg'],
  categories: ['all'],
  verbs: ALL_VERBS,
  subresources: [{ name: 'status', kind: 'Widget', verbs: ['get', 'patch', 'update'] }],
  // As every custom resource.
  nameRule: 'subdomain',
  createOnUpdate: false,
  generation: 'spec',
  columns: [nameColumn(), column('Color', 'The colour of the widget.', (o) => str(o, 'spec', 'color')), ageColumn()],
  fieldSelectors: { 'spec.color': (o) => str(o, 'spec', 'color') },
};

export const SAMPLE_TYPES: readonly ResourceType[] = [widgets];
