// The Event table, shared by core/v1 and events.k8s.io/v1: kube-apiserver
// serves both from one storage and prints both with printEvent, so the two
// types differ only in where each value is read from.
import type { KObject } from '../../api/meta.js';
import type { Column } from '../types.js';
import { column, nameColumn, since } from '../columns.js';
import { num, str, time } from '../fields.js';

/** What printEvent reads, independent of the API version's field names. */
export interface EventView {
  type: string;
  reason: string;
  kind: string;
  name: string;
  fieldPath: string;
  component: string;
  host: string;
  message: string;
  firstTimestamp: number | undefined;
  lastTimestamp: number | undefined;
  eventTime: number | undefined;
  count: number;
  series: { count: number; lastObservedTime: number | undefined } | undefined;
}

export function coreEventView(o: KObject): EventView {
  return {
    type: str(o, 'type'),
    reason: str(o, 'reason'),
    kind: str(o, 'involvedObject', 'kind'),
    name: str(o, 'involvedObject', 'name'),
    fieldPath: str(o, 'involvedObject', 'fieldPath'),
    component: str(o, 'source', 'component') || str(o, 'reportingComponent'),
    host: str(o, 'source', 'host') || str(o, 'reportingInstance'),
    message: str(o, 'message'),
    firstTimestamp: time(o, 'firstTimestamp'),
    lastTimestamp: time(o, 'lastTimestamp'),
    eventTime: time(o, 'eventTime'),
    count: num(o, 'count'),
    series: o['series'] ? { count: num(o, 'series', 'count'), lastObservedTime: time(o, 'series', 'lastObservedTime') } : undefined,
  };
}

export function eventsV1View(o: KObject): EventView {
  return {
    type: str(o, 'type'),
    reason: str(o, 'reason'),
    kind: str(o, 'regarding', 'kind'),
    name: str(o, 'regarding', 'name'),
    fieldPath: str(o, 'regarding', 'fieldPath'),
    component: str(o, 'deprecatedSource', 'component') || str(o, 'reportingController'),
    host: str(o, 'deprecatedSource', 'host') || str(o, 'reportingInstance'),
    message: str(o, 'note'),
    firstTimestamp: time(o, 'deprecatedFirstTimestamp'),
    lastTimestamp: time(o, 'deprecatedLastTimestamp'),
    eventTime: time(o, 'eventTime'),
    count: num(o, 'deprecatedCount'),
    series: o['series'] ? { count: num(o, 'series', 'count'), lastObservedTime: time(o, 'series', 'lastObservedTime') } : undefined,
  };
}

function firstSeen(e: EventView, now: number): string {
  return since(e.firstTimestamp ?? e.eventTime, now);
}

function lastSeen(e: EventView, now: number): string {
  if (e.series) return since(e.series.lastObservedTime, now);
  return e.lastTimestamp === undefined ? firstSeen(e, now) : since(e.lastTimestamp, now);
}

function count(e: EventView): number {
  if (e.series) return e.series.count;
  // Singleton events of the new API carry no count.
  return e.count === 0 ? 1 : e.count;
}

export function eventColumns(view: (o: KObject) => EventView): readonly Column[] {
  const c = (name: string, description: string, cell: (e: EventView, now: number) => string | number, priority: 0 | 1 = 0): Column =>
    column(name, description, (o, now) => cell(view(o), now), { priority });
  const name = nameColumn();
  return [
    c('Last Seen', 'The time at which the most recent occurrence of this event was recorded.', lastSeen),
    c('Type', 'Type of this event (Normal, Warning), new types could be added in the future', (e) => e.type),
    c(
      'Reason',
      "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
      (e) => e.reason,
    ),
    c('Object', 'The object that this event is about.', (e) => (e.name ? `${e.kind.toLowerCase()}/${e.name}` : e.kind.toLowerCase())),
    c(
      'Subobject',
      'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2].',
      (e) => e.fieldPath,
      1,
    ),
    c(
      'Source',
      'The component reporting this event. Should be a short machine understandable string.',
      (e) => (e.host ? `${e.component}, ${e.host}` : e.component),
      1,
    ),
    c('Message', 'A human-readable description of the status of this operation.', (e) => e.message.trim()),
    c('First Seen', 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)', firstSeen, 1),
    c('Count', 'The number of times this event has occurred.', count, 1),
    { ...name, priority: 1 },
  ];
}
