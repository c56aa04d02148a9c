// The request metrics' bound on label sets, without a server: past 2,000
// distinct sets (routed requests of resources a client names, such as a
// proxied group's), new ones share one `other` set per verb and scope, made
// once, so no series is written twice.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { labelsOf, observeRequest } from '../../gateway/metrics/requests.js';
import { metricsText } from '../../lib/metrics/registry.js';
import { parseRequestInfo } from '../../lib/api/requestinfo.js';

test('3,000 distinct resources make at most 2,000 label sets, then one `other` set', async () => {
  for (let i = 0; i < 3000; i++) {
    const info = parseRequestInfo('GET', `/apis/proxied.example.com/v1/namespaces/ns/kind${i}/name`, false);
    observeRequest(labelsOf({ info, method: 'GET', contentType: undefined, dryRun: false }), 200, 0.001, 100, 0.001);
  }
  const lines = (await metricsText()).body.split('\n').filter((l) => l.startsWith('apiserver_request_total{'));
  assert.equal(lines.length, 2001, '2,000 label sets and the other one');
  const other = lines.filter((l) => l.includes('resource="other"'));
  assert.equal(other.length, 1);
  assert.match(other[0]!, /verb="GET".*scope="resource".* 1000$/);
  const sets = lines.map((l) => l.slice(0, l.lastIndexOf(' ')));
  assert.equal(new Set(sets).size, sets.length);
  const sli = (await metricsText()).body.split('\n').filter((l) => l.startsWith('apiserver_request_sli_duration_seconds_count{'));
  assert.equal(sli.length, 2001);
});
