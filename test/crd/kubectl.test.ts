// kubectl 1.33 against custom resources: a CRD in the shape operators ship
// (test/crd/fixtures-data: a Certificate kind, written for these tests) installed with `kubectl apply -f`, waited
// for with `kubectl wait --for condition=established`, and its objects handled
// by get (printer columns, -o wide, short names, categories), describe, patch,
// server-side apply, explain and delete; `kubectl scale` through a scale
// subresource; `kubectl get crd` and `kubectl api-resources`.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { findKubectl, Kubectl, stopAll } from '../e2e/helpers.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { crontabCrd } from './fixtures.js';

const DATA = fileURLToPath(new URL('./fixtures-data/', import.meta.url));
const binary = findKubectl('1.33') ?? findKubectl();

describe('kubectl with custom resources', { skip: binary ? false : 'kubectl is not installed' }, () => {
  let s: TestServer;
  let k: Kubectl;
  before(async () => {
    s = await startTestServer();
    k = new Kubectl(binary!, s.kubeconfig);
  });
  after(async () => {
    await stopAll();
    await s.close();
  });

  it('installs a real CRD with kubectl apply and waits for Established', async () => {
    const out = await k.ok(['apply', '-f', `${DATA}pki.example.com_certificates.yaml`]);
    assert.match(out, /customresourcedefinition\.apiextensions\.k8s\.io\/certificates\.pki\.example\.com created/);
    const wait = await k.ok(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/certificates.pki.example.com']);
    assert.match(wait, /certificates\.pki\.example\.com condition met/);
    // A second client-side apply of the same file changes nothing (merge patch computed against last-applied).
    assert.match(await k.ok(['apply', '-f', `${DATA}pki.example.com_certificates.yaml`]), /certificates\.pki\.example\.com unchanged/);
    const crds = await k.ok(['get', 'crd']);
    assert.match(crds, /^NAME\s+CREATED AT$/m);
    assert.match(crds, /^certificates\.pki\.example\.com\s+\d{4}-\d\d-\d\dT/m);
  });

  it('lists the new resource in kubectl api-resources', async () => {
    const out = await k.ok(['api-resources', '--api-group', 'pki.example.com']);
    assert.match(out, /^certificates\s+cert,certs\s+pki\.example\.com\/v1\s+true\s+Certificate$/m);
  });

  it('creates, gets (columns, -o wide, short name, category), describes and explains Certificates', async () => {
    assert.match(await k.ok(['apply', '-f', `${DATA}certificate.yaml`]), /certificate\.pki\.example\.com\/example-com created/);
    const get = await k.ok(['get', 'certificates']);
    assert.match(get, /^NAME\s+READY\s+SECRET\s+AGE$/m);
    assert.match(get, /^example-com\s+example-com-tls\s+\d+s$/m);
    const wide = await k.ok(['get', 'cert', '-o', 'wide']);
    assert.match(wide, /^NAME\s+READY\s+SECRET\s+ISSUER\s+STATUS\s+AGE$/m);
    assert.match(wide, /^example-com\s+example-com-tls\s+ca-issuer\s+\d+s$/m);
    // A category naming one type prints that type's table.
    assert.match(await k.ok(['get', 'pki']), /^example-com\s+example-com-tls\s+\d+s$/m);
    const d = await k.ok(['describe', 'certificate', 'example-com']);
    assert.match(d, /^Kind:\s+Certificate$/m);
    assert.match(d, /Secret Name:\s+example-com-tls/);
    const explain = await k.ok(['explain', 'certificates.spec.issuerRef']);
    assert.match(explain, /KIND:\s+Certificate/);
    assert.match(explain, /name\s+<string> -required-/);
  });

  it('patches, applies server-side and deletes a Certificate', async () => {
    assert.match(await k.ok(['patch', 'certificate', 'example-com', '--type', 'merge', '-p', '{"spec":{"duration":"24h"}}']), /patched/);
    assert.equal(await k.ok(['get', 'certificate', 'example-com', '-o', 'jsonpath={.spec.duration}']), '24h');
    const yaml = readFileSync(`${DATA}certificate.yaml`, 'utf8').replace('duration: 2160h', 'duration: 48h');
    assert.match(
      await k.ok(['apply', '--server-side', '--force-conflicts', '-f', '-'], yaml),
      /certificate\.pki\.example\.com\/example-com serverside-applied/,
    );
    assert.equal(await k.ok(['get', 'certificate', 'example-com', '-o', 'jsonpath={.spec.duration}']), '48h');
    const managers = await k.ok(['get', 'certificate', 'example-com', '--show-managed-fields', '-o', 'jsonpath={.metadata.managedFields[*].manager}']);
    assert.match(managers, /kubectl/);
    const bad = await k.run(['apply', '--server-side', '-f', '-'], yaml.replace('  commonName: example.com\n', ''), 30_000);
    assert.equal(bad.code, 0, `removing a field one owns is an apply, not an error: ${bad.stderr}`);
    assert.equal(await k.ok(['get', 'certificate', 'example-com', '-o', 'jsonpath={.spec.commonName}']), '', 'the field the manager stopped applying is gone');
    assert.match(await k.ok(['delete', 'certificate', 'example-com']), /certificate\.pki\.example\.com "example-com" deleted/);
  });

  it('scales a custom resource with a scale subresource', async () => {
    await k.ok(['apply', '-f', '-'], JSON.stringify(crontabCrd()));
    await k.ok(['wait', '--for', 'condition=established', '--timeout=30s', 'crd/crontabs.stable.example.com']);
    await k.ok(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'stable.example.com/v1',
        kind: 'CronTab',
        metadata: { name: 'c1', namespace: 'default' },
        spec: { image: 'i', replicas: 1 },
      }),
    );
    assert.match(await k.ok(['scale', 'crontab/c1', '--replicas=4']), /crontab\.stable\.example\.com\/c1 scaled/);
    assert.equal(await k.ok(['get', 'ct', 'c1', '-o', 'jsonpath={.spec.replicas}']), '4');
    assert.match(await k.ok(['delete', 'crd', 'crontabs.stable.example.com']), /deleted/);
    const gone = await k.run(['get', 'crontabs'], undefined, 30_000);
    assert.notEqual(gone.code, 0);
  });

  it('explains the CustomResourceDefinition type itself from its OpenAPI schema', async () => {
    const versions = await k.ok(['explain', 'crd.spec.versions']);
    assert.match(versions, /^KIND:\s+CustomResourceDefinition$/m);
    assert.match(versions, /^FIELD: versions <\[\]CustomResourceDefinitionVersion>$/m);
    assert.match(versions, /versions is the list of all API versions of the defined custom resource/);
    assert.match(versions, /^\s+name\s+<string> -required-$/m);
    assert.match(versions, /^\s+served\s+<boolean> -required-$/m);
    assert.match(versions, /^\s+schema\s+<CustomResourceValidation>$/m);
    assert.match(versions, /^\s+additionalPrinterColumns\s+<\[\]CustomResourceColumnDefinition>$/m);
    const schema = await k.ok(['explain', 'customresourcedefinitions.spec.versions.schema.openAPIV3Schema']);
    assert.match(schema, /^FIELD: openAPIV3Schema <JSONSchemaProps>$/m);
    assert.match(schema, /^\s+x-kubernetes-validations\s+<\[\]ValidationRule>$/m);
    assert.match(schema, /^\s+default\s+<JSON>$/m);
    assert.match(schema, /^\s+properties\s+<map\[string\]JSONSchemaProps>$/m);
    const rule = await k.ok(['explain', 'crd.spec.versions.schema.openAPIV3Schema.x-kubernetes-validations']);
    assert.match(rule, /^\s+rule\s+<string> -required-$/m);
    assert.match(rule, /^\s+messageExpression\s+<string>$/m);
  });
});
