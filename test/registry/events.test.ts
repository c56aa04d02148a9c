import { test } from 'node:test';
import assert from 'node:assert/strict';
import { builtinRegistry } from '../../lib/registry/index.js';
import type { KObject } from '../../lib/api/meta.js';

const eventsV1 = builtinRegistry().lookup('events.k8s.io', 'v1', 'events')!;
const coreEvents = builtinRegistry().lookup('', 'v1', 'events')!;

function event(extra: Record<string, unknown> = {}): KObject {
  return {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: 'web.17a', namespace: 'default' },
    regarding: { kind: 'Pod', namespace: 'default', name: 'web' },
    type: 'Normal',
    action: 'Pulling',
    reason: 'Pulling',
    note: 'pulling image',
    reportingController: 'kubelet',
    reportingInstance: 'node-1',
    eventTime: '2025-01-01T00:00:00.000000Z',
    ...extra,
  };
}

const fields = (obj: KObject, old?: KObject) => eventsV1.validate!(obj, old).map((c) => c.field);

test('a complete new event is valid', () => {
  assert.deepEqual(eventsV1.validate!(event(), undefined), []);
});

test('type must be Normal or Warning', () => {
  assert.deepEqual(eventsV1.validate!(event({ type: 'Info' }), undefined), [
    { reason: 'FieldValueInvalid', field: 'type', message: 'Invalid value: "": has invalid value: Info' },
  ]);
  assert.deepEqual(fields(event({ type: 'Warning' })), []);
  assert.deepEqual(fields(event({ type: undefined })), ['type']);
});

test('action, reason, reportingController and reportingInstance are required on create', () => {
  const causes = eventsV1.validate!(event({ action: '', reason: undefined, reportingController: '', reportingInstance: '' }), undefined);
  assert.deepEqual(
    causes.map((c) => [c.field, c.reason]),
    [
      ['reportingController', 'FieldValueRequired'],
      ['reportingInstance', 'FieldValueRequired'],
      ['action', 'FieldValueRequired'],
      ['reason', 'FieldValueRequired'],
    ],
  );
});

test('eventTime is required on create', () => {
  assert.ok(fields(event({ eventTime: undefined })).includes('eventTime'));
});

test('the deprecated fields are not permitted in new events', () => {
  const causes = eventsV1.validate!(
    event({
      deprecatedFirstTimestamp: '2025-01-01T00:00:00Z',
      deprecatedLastTimestamp: '2025-01-01T00:00:00Z',
      deprecatedCount: 3,
      deprecatedSource: { component: 'kubelet' },
    }),
    undefined,
  );
  assert.deepEqual(
    causes.map((c) => [c.field, c.message]),
    [
      ['deprecatedFirstTimestamp', 'Invalid value: "": needs to be unset'],
      ['deprecatedLastTimestamp', 'Invalid value: "": needs to be unset'],
      ['deprecatedCount', 'Invalid value: "": needs to be unset'],
      ['deprecatedSource', 'Invalid value: "": needs to be unset'],
    ],
  );
  assert.deepEqual(fields(event({ deprecatedCount: 0, deprecatedSource: {} })), []);
});

test('field lengths are limited as kube limits them', () => {
  assert.deepEqual(eventsV1.validate!(event({ reason: 'r'.repeat(129) }), undefined), [
    { reason: 'FieldValueInvalid', field: 'reason', message: 'Invalid value: "": can have at most 128 characters' },
  ]);
  assert.deepEqual(fields(event({ note: 'n'.repeat(1025) })), ['note']);
});

test('a series needs a count of at least two and a last observed time', () => {
  assert.deepEqual(fields(event({ series: { count: 1 } })), ['series.count', 'series.lastObservedTime']);
  assert.deepEqual(fields(event({ series: { count: 2, lastObservedTime: '2025-01-01T00:00:01.000000Z' } })), []);
});

test('an event about a cluster-scoped object belongs in default or kube-system', () => {
  const node = { regarding: { kind: 'Node', name: 'n1' } };
  assert.deepEqual(fields(event(node)), []);
  assert.deepEqual(fields({ ...event(node), metadata: { name: 'x', namespace: 'team-a' } }), ['regarding.namespace']);
});

test('updates may change the series but not what the event is about', () => {
  const old = event();
  assert.deepEqual(fields(event({ series: { count: 2, lastObservedTime: '2025-01-01T00:00:05.000000Z' } }), old), []);
  const causes = eventsV1.validate!(event({ note: 'changed', type: 'Warning' }), old);
  assert.deepEqual(
    causes.map((c) => [c.field, c.message]),
    [
      ['note', 'Invalid value: "changed": field is immutable'],
      ['type', 'Invalid value: "Warning": field is immutable'],
    ],
  );
});

test('core events keep the lenient legacy rules', () => {
  const legacy: KObject = {
    metadata: { name: 'e', namespace: 'default' },
    involvedObject: { kind: 'Pod', namespace: 'default', name: 'web' },
    reason: 'Started',
    type: 'Whatever',
  };
  assert.deepEqual(coreEvents.validate!(legacy, undefined), []);
  const mismatched: KObject = { ...legacy, involvedObject: { kind: 'Pod', namespace: 'other', name: 'web' } };
  assert.deepEqual(
    coreEvents.validate!(mismatched, undefined).map((c) => c.field),
    ['involvedObject.namespace'],
  );
  const modern: KObject = { ...legacy, eventTime: '2025-01-01T00:00:00.000000Z' };
  assert.deepEqual(
    coreEvents.validate!(modern, undefined).map((c) => c.field),
    ['reportingComponent', 'reportingInstance', 'action'],
  );
});
