// Event validation after kube's pkg/apis/core/validation/events.go. The core
// API keeps the lenient legacy rules for old clients; events.k8s.io/v1 adds the
// strict rules of the new API (resource-api.md, Event resource). Causes name
// the fields of the API version the client wrote (regarding, note,
// deprecatedCount, …), because those are the fields the client can fix.
import type { KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { isQualifiedName } from '../names.js';
import { at, num, sameJson, str, time } from '../fields.js';

const REPORTING_INSTANCE_MAX = 128;
const ACTION_MAX = 128;
const REASON_MAX = 128;
const NOTE_MAX = 1024;

/** Where each legacy-checked value lives in one API version. */
interface Fields {
  involved: string;
  controller: string;
  message: string;
}
const CORE: Fields = { involved: 'involvedObject', controller: 'reportingComponent', message: 'message' };
const EVENTS_V1: Fields = { involved: 'regarding', controller: 'reportingController', message: 'note' };

function tooLongAt(field: string, value: string, max: number): StatusCause[] {
  return value.length > max ? [cause.invalid(field, '', `can have at most ${max} characters`)] : [];
}

/** legacyValidateEvent: what every Event must satisfy, whichever API wrote it. */
function legacy(o: KObject, f: Fields): StatusCause[] {
  const causes: StatusCause[] = [];
  const ns = o.metadata.namespace ?? '';
  const involvedNs = str(o, f.involved, 'namespace');
  const nsField = `${f.involved}.namespace`;
  if (time(o, 'eventTime') === undefined) {
    // Old clients put events about cluster-scoped objects in "default".
    if (involvedNs === '' ? ns !== '' && ns !== 'default' : ns !== involvedNs) {
      causes.push(cause.invalid(nsField, involvedNs, 'does not match event.namespace'));
    }
    return causes;
  }
  if (involvedNs === '' && ns !== 'default' && ns !== 'kube-system') causes.push(cause.invalid(nsField, involvedNs, 'does not match event.namespace'));
  const controller = str(o, f.controller);
  if (controller === '') causes.push(cause.required(f.controller));
  else for (const m of isQualifiedName(controller)) causes.push(cause.invalid(f.controller, controller, m));
  const instance = str(o, 'reportingInstance');
  if (instance === '') causes.push(cause.required('reportingInstance'));
  causes.push(...tooLongAt('reportingInstance', instance, REPORTING_INSTANCE_MAX));
  const action = str(o, 'action');
  if (action === '') causes.push(cause.required('action'));
  causes.push(...tooLongAt('action', action, ACTION_MAX));
  const reason = str(o, 'reason');
  if (reason === '') causes.push(cause.required('reason'));
  causes.push(...tooLongAt('reason', reason, REASON_MAX));
  causes.push(...tooLongAt(f.message, str(o, f.message), NOTE_MAX));
  return causes;
}

function series(o: KObject): StatusCause[] {
  if (at(o, 'series') === undefined || at(o, 'series') === null) return [];
  const causes: StatusCause[] = [];
  if (num(o, 'series', 'count') < 2) causes.push(cause.invalid('series.count', '', 'should be at least 2'));
  if (time(o, 'series', 'lastObservedTime') === undefined) causes.push(cause.required('series.lastObservedTime'));
  return causes;
}

/** core/v1 Event: only the legacy rules, for backwards compatibility (as kube does for v1). */
export function validateCoreEvent(obj: KObject): StatusCause[] {
  return legacy(obj, CORE);
}

const DEPRECATED = ['deprecatedFirstTimestamp', 'deprecatedLastTimestamp', 'deprecatedCount', 'deprecatedSource'] as const;
const IMMUTABLE = [
  'regarding',
  'reason',
  'note',
  'deprecatedSource',
  'deprecatedFirstTimestamp',
  'deprecatedLastTimestamp',
  'deprecatedCount',
  'type',
  'eventTime',
  'action',
  'related',
  'reportingController',
  'reportingInstance',
] as const;

function isSet(o: KObject, field: (typeof DEPRECATED)[number]): boolean {
  switch (field) {
    case 'deprecatedCount':
      return num(o, field) !== 0;
    case 'deprecatedSource':
      return str(o, field, 'component') !== '' || str(o, field, 'host') !== '';
    default:
      return time(o, field) !== undefined;
  }
}

/** events.k8s.io/v1 Event: legacy rules plus the new API's, and on update the immutable fields. */
export function validateEventsV1(obj: KObject, old: KObject | undefined): StatusCause[] {
  const causes = legacy(obj, EVENTS_V1);
  causes.push(...series(obj));
  if (old) {
    for (const f of IMMUTABLE) if (!sameJson(obj[f], old[f])) causes.push(cause.invalid(f, obj[f] ?? null, 'field is immutable'));
    return causes;
  }
  if (time(obj, 'eventTime') === undefined) causes.push(cause.required('eventTime'));
  const type = str(obj, 'type');
  if (type !== 'Normal' && type !== 'Warning') causes.push(cause.invalid('type', '', `has invalid value: ${type}`));
  for (const f of DEPRECATED) if (isSet(obj, f)) causes.push(cause.invalid(f, '', 'needs to be unset'));
  return causes;
}
