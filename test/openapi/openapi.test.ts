// /openapi/v3 and /openapi/v2 serve the structural schemas with Kubernetes' markers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { builtinRegistry } from '../../lib/registry/index.js';

let s: TestServer;
before(async () => {
  s = await startTestServer({ flags: ['--authorization-mode=AlwaysAllow'] });
});
after(async () => {
  await s.close();
});

describe('OpenAPI', () => {
  it('gives every built-in type a schema in the registry', () => {
    for (const t of builtinRegistry().all()) assert.ok(t.schema, `${t.group}/${t.version} ${t.kind} has no schema`);
  });
  it('serves CustomResourceDefinition in /openapi/v3 and /openapi/v2 as kube does (JSONSchemaProps, the any-value types)', async () => {
    const root = await s.admin.request('GET', '/openapi/v3');
    const doc = (await s.admin.request('GET', root.json.paths['apis/apiextensions.k8s.io/v1'].serverRelativeURL as string)).json;
    const ext = 'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1';
    const schemas = doc.components.schemas;
    const crd = schemas[`${ext}.CustomResourceDefinition`];
    assert.deepEqual(crd.required, ['spec']);
    assert.deepEqual(crd['x-kubernetes-group-version-kind'], [{ group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition' }]);
    assert.deepEqual(crd.properties.spec, {
      allOf: [{ $ref: `#/components/schemas/${ext}.CustomResourceDefinitionSpec` }],
      description: 'spec describes how the user wants the resources to appear',
      default: {},
    });
    assert.deepEqual(schemas[`${ext}.CustomResourceDefinitionList`]['x-kubernetes-group-version-kind'], [
      { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinitionList' },
    ]);
    const props = schemas[`${ext}.JSONSchemaProps`].properties;
    assert.deepEqual(props['x-kubernetes-validations']['x-kubernetes-list-map-keys'], ['rule']);
    assert.equal(props['x-kubernetes-validations']['x-kubernetes-list-type'], 'map');
    assert.equal(props['x-kubernetes-validations']['x-kubernetes-patch-merge-key'], 'rule');
    assert.deepEqual(props.properties.additionalProperties, { allOf: [{ $ref: `#/components/schemas/${ext}.JSONSchemaProps` }], default: {} });
    assert.deepEqual(props.default.allOf, [{ $ref: `#/components/schemas/${ext}.JSON` }]);
    // Any JSON value: kube-openapi serves these with a description and no type.
    assert.deepEqual(Object.keys(schemas[`${ext}.JSON`]), ['description']);
    assert.deepEqual(Object.keys(schemas[`${ext}.JSONSchemaPropsOrArray`]), ['description']);
    assert.deepEqual(schemas[`${ext}.CustomResourceDefinitionStatus`].properties.conditions['x-kubernetes-list-type'], 'map');
    const v2 = (await s.admin.request('GET', '/openapi/v2')).json;
    assert.deepEqual(v2.definitions[`${ext}.CustomResourceDefinition`]['x-kubernetes-group-version-kind'], [
      { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition' },
    ]);
    assert.deepEqual(v2.definitions[`${ext}.JSONSchemaProps`].properties.items, { $ref: `#/definitions/${ext}.JSONSchemaPropsOrArray` });
    assert.deepEqual(Object.keys(v2.definitions[`${ext}.JSONSchemaPropsOrBool`]), ['description']);
  });
  it('serves the Pod schema in /openapi/v3/api/v1 with list markers, required fields and formats', async () => {
    const root = await s.admin.request('GET', '/openapi/v3');
    const url = root.json.paths['api/v1'].serverRelativeURL as string;
    const doc = (await s.admin.request('GET', url)).json;
    const schemas = doc.components.schemas;
    const spec = schemas['io.k8s.api.core.v1.PodSpec'];
    assert.deepEqual(spec.required, ['containers']);
    const containers = spec.properties.containers;
    assert.equal(containers['x-kubernetes-list-type'], 'map');
    assert.deepEqual(containers['x-kubernetes-list-map-keys'], ['name']);
    assert.equal(containers['x-kubernetes-patch-strategy'], 'merge');
    assert.equal(containers['x-kubernetes-patch-merge-key'], 'name');
    assert.deepEqual(schemas['io.k8s.api.core.v1.Pod']['x-kubernetes-group-version-kind'], [{ group: '', version: 'v1', kind: 'Pod' }]);
    assert.equal(schemas['io.k8s.apimachinery.pkg.util.intstr.IntOrString'].format, 'int-or-string');
    assert.equal(schemas['io.k8s.apimachinery.pkg.apis.meta.v1.Time'].format, 'date-time');
    assert.equal(schemas['io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector']['x-kubernetes-map-type'], 'atomic');
    assert.ok(schemas['io.k8s.api.core.v1.Container'].description.startsWith('A single application container'));
  });
  it('serves one Swagger 2.0 document at /openapi/v2 as JSON', async () => {
    const r = await s.admin.request('GET', '/openapi/v2', undefined, { accept: 'application/json' });
    assert.equal(r.status, 200);
    assert.equal(r.json.swagger, '2.0');
    assert.equal(r.json.definitions['io.k8s.api.rbac.v1.RoleBinding'].required.includes('roleRef'), true);
    assert.equal(r.json.definitions['io.k8s.api.core.v1.Container'].properties.env['x-kubernetes-patch-merge-key'], 'name');
    assert.ok(r.json.paths['/api/v1/namespaces/{namespace}/pods/{name}'].patch);
  });
  it('answers 406 to a client that accepts neither JSON nor the protobuf form of /openapi/v2', async () => {
    const r = await s.admin.request('GET', '/openapi/v2', undefined, { accept: 'application/xml' });
    assert.equal(r.status, 406);
  });
});
