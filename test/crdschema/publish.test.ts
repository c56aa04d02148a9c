// The OpenAPI form of a CRD version, as kube-apiserver publishes it: the kind
// with apiVersion/kind/metadata and its group-version-kind, the list kind, and
// the v2 flavour without what Swagger 2.0 cannot say.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileCrdSchema, type CrdVersionRef } from '../../lib/crdschema/index.js';

const REF: CrdVersionRef = { group: 'stable.example.com', version: 'v1', kind: 'CronTab', listKind: 'CronTabList', plural: 'crontabs' };
const SCHEMA = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      description: 'the spec',
      properties: {
        cron: { type: 'string', pattern: '^\\S+$' },
        port: { 'x-kubernetes-int-or-string': true },
        note: { type: 'string', nullable: true },
        mode: { type: 'string', anyOf: [{ enum: ['a'] }, { enum: ['b'] }] },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { a: { type: 'string' } } },
        template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
      },
      required: ['cron', 'note'],
    },
  },
};

describe('published OpenAPI', () => {
  const c = compileCrdSchema(SCHEMA, REF);

  it('v3: the kind with type meta, ObjectMeta, its GVK, int-or-string unfolded', () => {
    const defs = c.definitions!('v3');
    assert.deepEqual(Object.keys(defs), ['com.example.stable.v1.CronTab', 'com.example.stable.v1.CronTabList']);
    const kind = defs['com.example.stable.v1.CronTab']! as { properties: Record<string, Record<string, unknown>> };
    assert.equal(c.openapi, kind);
    assert.deepEqual(kind['x-kubernetes-group-version-kind' as never], [{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }]);
    assert.deepEqual(Object.keys(kind.properties).sort(), ['apiVersion', 'kind', 'metadata', 'spec']);
    assert.equal(kind.properties.metadata!.$ref, '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    assert.match(String(kind.properties.apiVersion!.description), /^APIVersion defines the versioned schema/);
    const spec = kind.properties.spec as { properties: Record<string, Record<string, unknown>>; required: string[] };
    assert.deepEqual(spec.properties.port, { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] });
    assert.deepEqual(spec.properties.note, { type: 'string', nullable: true });
    assert.deepEqual(spec.properties.mode!.anyOf, [{ enum: ['a'] }, { enum: ['b'] }]);
    assert.deepEqual(spec.required, ['cron', 'note']);
    const template = spec.properties.template as { properties: Record<string, Record<string, unknown>>; required: string[] };
    assert.deepEqual(Object.keys(template.properties).sort(), ['apiVersion', 'kind', 'metadata']);
    assert.deepEqual(template.required, ['kind', 'apiVersion']);
  });

  it('the list kind', () => {
    const list = c.definitions!('v3')['com.example.stable.v1.CronTabList'] as {
      properties: Record<string, Record<string, unknown>>;
      required: string[];
      description: string;
    };
    assert.equal(list.description, 'CronTabList is a list of CronTab');
    assert.deepEqual(list.required, ['items']);
    assert.deepEqual((list.properties.items as { items: unknown }).items, { $ref: '#/components/schemas/com.example.stable.v1.CronTab' });
    assert.equal(list.properties.metadata!.$ref, '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta');
    assert.deepEqual(list['x-kubernetes-group-version-kind' as never], [{ group: 'stable.example.com', kind: 'CronTabList', version: 'v1' }]);
  });

  it('v2: no value validations, nullable and preserve-unknown-fields lose their type and members, #/definitions refs', () => {
    const kind = c.definitions!('v2')['com.example.stable.v1.CronTab'] as { properties: Record<string, Record<string, unknown>> };
    assert.equal(kind.properties.metadata!.$ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta');
    const spec = kind.properties.spec as { properties: Record<string, Record<string, unknown>>; required: string[] };
    assert.deepEqual(spec.properties.port, { 'x-kubernetes-int-or-string': true });
    assert.deepEqual(spec.properties.note, {});
    assert.equal(spec.properties.mode!.anyOf, undefined);
    assert.deepEqual(spec.properties.free, { 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(spec.properties.template, { 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(spec.required, ['cron']);
  });

  it('a root that preserves unknown fields is a bare object in v2', () => {
    const c2 = compileCrdSchema({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true }, REF);
    assert.deepEqual(c2.definitions!('v2')['com.example.stable.v1.CronTab'], {
      type: 'object',
      'x-kubernetes-group-version-kind': [{ group: 'stable.example.com', kind: 'CronTab', version: 'v1' }],
    });
  });

  it('hands out frozen documents', () => {
    assert.throws(() => {
      (c.openapi as Record<string, unknown>).x = 1;
    }, TypeError);
  });
});
