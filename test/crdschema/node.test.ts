// compileCrdSchema's node: the registry's schema model built from a CRD
// schema, read by the existing machinery — lib/validation prunes and reports
// unknown fields, server-side apply's shapes see list types and keys.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileCrdSchema, type CrdVersionRef } from '../../lib/crdschema/index.js';
import { pruneAndValidate } from '../../lib/validation/structural.js';
import { checkObject } from '../../lib/validation/fields.js';
import { itemKey, shapeOf } from '../../lib/fieldmanager/shape.js';
import type { ListNode, StructNode } from '../../lib/schema/model.js';
import type { KObject } from '../../lib/api/meta.js';

const REF: CrdVersionRef = { group: 'stable.example.com', version: 'v1', kind: 'CronTab', listKind: 'CronTabList', plural: 'crontabs' };

const SCHEMA = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['cron'],
      properties: {
        cron: { type: 'string' },
        replicas: { type: 'integer', format: 'int32' },
        port: { 'x-kubernetes-int-or-string': true },
        note: { type: 'string', nullable: true },
        tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, port: { type: 'integer' } } },
        },
        labels: { type: 'object', additionalProperties: { type: 'string' }, 'x-kubernetes-map-type': 'atomic' },
        free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        partly: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { known: { type: 'object', properties: { a: { type: 'string' } } } },
        },
        anything: { 'x-kubernetes-preserve-unknown-fields': true },
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          properties: { spec: { type: 'object', properties: { x: { type: 'string' } } } },
        },
        closed: { type: 'object' },
      },
    },
  },
};

const compiled = () => compileCrdSchema(SCHEMA, REF);
const prune = (obj: Record<string, unknown>) => pruneAndValidate(obj, compiled().node!);

describe('compileCrdSchema: the node', () => {
  it('names the root as kube names the OpenAPI definition', () => {
    const node = compiled().node!;
    assert.equal(node.definition, 'com.example.stable.v1.CronTab');
    assert.deepEqual([...node.fields.keys()].sort(), ['apiVersion', 'kind', 'metadata', 'spec']);
  });

  it('prunes unknown fields through lib/validation and names them', () => {
    const obj = {
      apiVersion: 'stable.example.com/v1',
      kind: 'CronTab',
      metadata: { name: 'a', bogus: 1 },
      spec: {
        cron: '* * * * *',
        extra: true,
        ports: [{ name: 'http', port: 80, junk: 1 }],
        free: { anything: { goes: [1] } },
        partly: { other: 1, known: { a: 'x', b: 'y' } },
        anything: [1, 2],
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', nope: 1 }, spec: { x: 'y', z: 1 }, status: {} },
        closed: { a: 1 },
      },
      status: { x: 1 },
    };
    const { unknown, causes } = prune(obj);
    assert.deepEqual(
      unknown.sort(),
      [
        'metadata.bogus',
        'spec.closed.a',
        'spec.extra',
        'spec.partly.known.b',
        'spec.ports[0].junk',
        'spec.template.metadata.nope',
        'spec.template.spec.z',
        'spec.template.status',
        'status',
      ].sort(),
    );
    assert.deepEqual(causes, []);
    assert.deepEqual(obj.spec.free, { anything: { goes: [1] } });
    assert.deepEqual(obj.spec.partly, { other: 1, known: { a: 'x' } });
    assert.deepEqual(obj.spec.anything, [1, 2]);
    assert.deepEqual(obj.spec.template, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { x: 'y' } });
    assert.deepEqual(obj.spec.closed, {});
  });

  it('leaves types and required fields to validate (kube words them), and keeps nullable nulls', () => {
    const obj = { spec: { replicas: 'three', note: null, tags: 'x' } };
    const { unknown, causes } = prune(obj);
    assert.deepEqual(unknown, []);
    assert.deepEqual(causes, []);
    assert.deepEqual(obj.spec, { replicas: 'three', note: null, tags: 'x' });
    const v = compiled().validate(obj as unknown as KObject, undefined);
    assert.deepEqual(
      v.map((c) => `${c.field}: ${c.message}`),
      [
        'spec.cron: Required value',
        'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        'spec.tags: Invalid value: "string": spec.tags in body must be of type array: "string"',
      ],
    );
  });

  it('removes a null that is not nullable', () => {
    const obj = { spec: { cron: null } };
    prune(obj);
    assert.deepEqual(obj.spec, {});
  });

  it('gives fieldValidation=Strict the unknown fields', () => {
    assert.throws(
      () =>
        checkObject({ spec: { cron: 'x', extra: 1 } }, compiled().node, [], {
          level: 'Strict',
          strictPrefix: '',
          gk: { group: REF.group, kind: REF.kind },
          name: 'a',
        }),
      (err: Error) => /strict decoding error: unknown field "spec\.extra"/.test(err.message),
    );
  });

  it('carries list types, map keys and map types for server-side apply', () => {
    const spec = compiled().node!.fields.get('spec')!.node as StructNode;
    const ports = spec.fields.get('ports')!.node as ListNode;
    assert.equal(ports.listType, 'map');
    assert.deepEqual(ports.keys, ['name']);
    assert.equal(itemKey(ports, { name: 'http', port: 80 }, 0), 'k:{"name":"http"}');
    const tags = spec.fields.get('tags')!.node as ListNode;
    assert.equal(tags.listType, 'set');
    assert.equal(shapeOf(spec.fields.get('labels')!.node, { a: 'b' }).t, 'atomic');
    assert.equal(shapeOf(spec.fields.get('free')!.node, { a: 'b' }).t, 'struct');
    assert.deepEqual(spec.fields.get('port')!.node, { kind: 'scalar', type: 'int-or-string', format: 'int-or-string' });
    const plain = compileCrdSchema({ type: 'object', properties: { l: { type: 'array', items: { type: 'string' } } } }, REF).node!;
    assert.equal((plain.fields.get('l')!.node as ListNode).listType, 'atomic');
  });

  it('keeps every field when the version has no schema', () => {
    const c = compileCrdSchema(undefined, REF);
    const obj = { spec: { anything: 1 }, status: {} };
    assert.deepEqual(pruneAndValidate(obj, c.node!).unknown, []);
    assert.deepEqual(obj, { spec: { anything: 1 }, status: {} });
  });
});
