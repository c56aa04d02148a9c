// core/v1 ComponentStatuses: read-only, deprecated since 1.19 (versions.ts),
// computed on every read by the core backend (handlers/componentstatuses.ts),
// never stored. The table is kube's printComponentStatus.
import type { KObject } from '../../api/meta.js';
import { column, nameColumn } from '../columns.js';
import { list, str } from '../fields.js';
import { core } from './core.js';

/** The Healthy condition as kubectl shows it: status, message, error. */
function healthy(o: KObject): [string, string, string] {
  const c = list(o, 'conditions').find((x) => str(x, 'type') === 'Healthy');
  if (!c) return ['Unknown', '', ''];
  return [str(c, 'status') === 'True' ? 'Healthy' : 'Unhealthy', str(c, 'message'), str(c, 'error')];
}

export const componentstatuses = core('ComponentStatus', 'componentstatuses', {
  namespaced: false,
  shortNames: ['cs'],
  verbs: ['get', 'list'],
  computed: true,
  columns: [
    nameColumn(),
    column('Status', 'Status of the component conditions', (o) => healthy(o)[0]),
    column('Message', 'Message of the component conditions', (o) => healthy(o)[1]),
    column('Error', 'Error of the component conditions', (o) => healthy(o)[2]),
  ],
});
