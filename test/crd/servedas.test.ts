// render.ts servedAs: a stored custom resource as one version serves it —
// apiVersion rewritten (conversion None), schema defaults applied on read once
// per stored object, the stored object itself when nothing differs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { servedAs } from '../../backends/core/render.js';
import { deepFreezeJson } from '../../lib/api/json.js';
import type { KObject } from '../../lib/api/meta.js';
import type { ResourceType } from '../../lib/registry/types.js';
import { crdResourceTypes } from '../../lib/crd/resourcetypes.js';
import { crontabCrd } from './fixtures.js';

const [v1] = crdResourceTypes(crontabCrd() as unknown as KObject);
const stored = (apiVersion: string, spec: Record<string, unknown>) =>
  deepFreezeJson({ apiVersion, kind: 'CronTab', metadata: { name: 'a', resourceVersion: '5' }, spec } as KObject);

test('a stored object of the served version is served as it is', () => {
  const o = stored('stable.example.com/v1', { image: 'x' });
  assert.equal(servedAs(v1!, o), o);
});

test('another version of the same CRD gets its apiVersion, nothing else changes', () => {
  const o = stored('stable.example.com/v1beta1', { image: 'x' });
  const s = servedAs(v1!, o);
  assert.equal(s.apiVersion, 'stable.example.com/v1');
  assert.deepEqual({ ...s, apiVersion: o.apiVersion }, o);
});

test('schema defaults apply on read, once per stored object, and leave a complete object alone', () => {
  let calls = 0;
  const t: ResourceType = {
    ...v1!,
    readDefaults: (obj) => {
      calls++;
      const spec = obj['spec'] as Record<string, unknown>;
      spec['replicas'] ??= 1;
    },
  };
  const o = stored('stable.example.com/v1', { image: 'x' });
  const s = servedAs(t, o);
  assert.deepEqual(s['spec'], { image: 'x', replicas: 1 });
  assert.ok(Object.isFrozen(s), 'what is served is frozen like what is stored');
  assert.equal(servedAs(t, o), s);
  assert.equal(calls, 1);
  const full = stored('stable.example.com/v1', { image: 'x', replicas: 3 });
  assert.equal(servedAs(t, full), full);
  assert.equal(servedAs({ ...v1! }, o), o, 'a type without read defaults serves the stored object');
});
