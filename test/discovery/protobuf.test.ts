// Aggregated discovery in protobuf, as kube serves it (apidiscovery/v2's
// messages): what client-go's discovery client asks for first. The body is
// the Kubernetes envelope ("k8s\0", TypeMeta, the message) and decodes to the
// same document as the JSON answer; v2beta1 and the legacy documents stay JSON.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { decodeEnvelope } from '../../lib/protobuf/codec.js';

const PB = 'application/vnd.kubernetes.protobuf';
const AGG = (type: string, v = 'v2') => `${type};g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList`;
// client-go's order (discovery_client.go acceptDiscoveryFormats).
const CLIENT_GO = [AGG(PB), AGG('application/json'), AGG('application/json', 'v2beta1'), 'application/json'].join(',');

describe('aggregated discovery in protobuf', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
  });

  for (const path of ['/api', '/apis']) {
    it(`answers ${path} in protobuf to client-go's Accept, equal to the JSON document`, async () => {
      const r = await s.admin.request('GET', path, undefined, { accept: CLIENT_GO });
      assert.equal(r.status, 200);
      assert.equal(r.headers['content-type'], AGG(PB));
      assert.equal(r.headers['vary'], 'Accept');
      const body = r.body as Buffer;
      assert.deepEqual(body.subarray(0, 4), Buffer.from('k8s\0', 'latin1'));
      const decoded = decodeEnvelope(body);
      assert.equal(decoded.apiVersion, 'apidiscovery.k8s.io/v2');
      assert.equal(decoded.kind, 'APIGroupDiscoveryList');
      const json = await s.admin.request('GET', path, undefined, { accept: AGG('application/json') });
      assert.deepEqual(decoded.object, json.json);
      const again = await s.admin.request('GET', path, undefined, { accept: CLIENT_GO, 'if-none-match': String(r.headers['etag']) });
      assert.equal(again.status, 304);
    });
  }

  it('keeps v2beta1 and the legacy documents in JSON', async () => {
    const beta = await s.admin.request('GET', '/apis', undefined, { accept: `${AGG(PB, 'v2beta1')},${AGG('application/json', 'v2beta1')}` });
    assert.equal(beta.headers['content-type'], AGG('application/json', 'v2beta1'));
    const legacy = await s.admin.request('GET', '/apis/apps/v1', undefined, { accept: `${PB},application/json` });
    assert.equal(legacy.headers['content-type'], 'application/json');
  });
});
