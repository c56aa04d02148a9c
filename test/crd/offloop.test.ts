// Nothing a CRD author writes stalls other clients: a CRD's schema checks
// (RE2 patterns, CEL rules, cost estimates) run on a worker thread within a
// time budget. While a CRD with a 2.8 MiB pattern (over the budget: refused,
// naming the pattern) or with 1,000 CEL rules (accepted, then enforced) is
// written, another client's GET loop is answered throughout; so it is while a
// custom resource's value first meets a pattern that takes RE2JS seconds to
// compile (tested on the same worker). The server runs in this process, so a
// GET sent and answered while the worker runs a check shows the event loop
// free meanwhile; with the check on the loop there is no such GET by
// construction (no worker check runs, and a synchronous compile lets no
// round trip through), so no wall-clock bound is needed and load cannot fail it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { checkRunningOffLoop, crdCheckBudget, type RunningCheck } from '../../lib/registry/builtins/crd-offloop.js';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CRD_PATH, crontab, crontabCrd, waitEstablished } from './fixtures.js';

type Json = Record<string, any>;
const PATTERN_FIELD = 'spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[cronSpec].pattern';

/**
 * Another client's GET loop; `stop()` ends it and answers how many of its round trips were sent and
 * answered while the worker ran one check of `task` for `name` (the same check before and after).
 */
function getLoop(s: TestServer, task: RunningCheck['task'], name: string): { stop(): Promise<number> } {
  let running = true;
  let duringCheck = 0;
  const loop = (async () => {
    while (running) {
      const check = checkRunningOffLoop();
      const r = await s.admin.request('GET', '/api/v1/namespaces/default');
      assert.equal(r.status, 200);
      if (check?.task === task && check.name === name && checkRunningOffLoop() === check) duringCheck++;
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return duringCheck;
    },
  };
}

function schemaOf(crd: Json): Json {
  return crd.spec.versions[0].schema.openAPIV3Schema;
}

describe('CRD schema checks off the event loop', { timeout: 300_000 }, () => {
  let s: TestServer;
  const budget = crdCheckBudget.ms;
  before(async () => {
    s = await startTestServer();
    // The first costly CRD write starts the check worker (a CRD of a few small rules is checked in place).
    const warm = crontabCrd() as Json;
    schemaOf(warm).properties.spec['x-kubernetes-validations'] = Array.from({ length: 10 }, (_, i) => ({ rule: `self.size() >= ${i}` }));
    assert.equal((await s.admin.request('POST', CRD_PATH, warm)).status, 201);
  });
  after(async () => {
    crdCheckBudget.ms = budget;
    await s?.close();
  });

  it('refuses a 2.8 MiB pattern over the check budget with 422 naming it, other clients served meanwhile', async (t) => {
    // Far under the compile's seconds on any machine (2.6 s at load 4 on a fast one): a faster machine must not fit in it.
    crdCheckBudget.ms = 500;
    const crd = crontabCrd({ group: 'pattern.example.com' }) as Json;
    // RE2JS takes seconds for it (Go's compiler milliseconds).
    const pattern = '[a-z]?'.repeat(Math.floor((2.8 * 1024 * 1024) / 6));
    schemaOf(crd).properties.spec.properties.cronSpec.pattern = pattern;
    const loop = getLoop(s, 'write', 'crontabs.pattern.example.com');
    const r = await s.admin.request('POST', CRD_PATH, crd);
    const served = await loop.stop();
    crdCheckBudget.ms = budget;
    assert.equal(r.status, 422, r.text.slice(0, 500));
    const body = r.json as Json;
    assert.deepEqual(body.details.causes, [
      { reason: 'FieldValueForbidden', field: PATTERN_FIELD, message: 'Forbidden: compilation exceeds the time budget of 0.5s' },
    ]);
    assert.equal(
      body.message,
      `CustomResourceDefinition.apiextensions.k8s.io "crontabs.pattern.example.com" is invalid: ${PATTERN_FIELD}: Forbidden: compilation exceeds the time budget of 0.5s`,
    );
    assert.equal((await s.admin.request('GET', `${CRD_PATH}/crontabs.pattern.example.com`)).status, 404, 'nothing stored');
    t.diagnostic(`${served} GETs sent and answered while the worker checked the write (reported; only > 0 asserted)`);
    assert.ok(served > 0, 'no GET was sent and answered while the worker checked the write');
  });

  it('accepts and enforces a CRD of 1,000 rules, other clients served meanwhile', async (t) => {
    const crd = crontabCrd({ group: 'rules.example.com' }) as Json;
    const spec = schemaOf(crd).properties.spec;
    spec.properties.replicas.maximum = 1_000_000;
    spec['x-kubernetes-validations'] = Array.from({ length: 1000 }, (_, i) => ({
      rule: `!has(self.replicas) || self.replicas != ${i} || self.image == 'r${i}'`,
      message: `replicas ${i} needs image r${i}`,
    }));
    const loop = getLoop(s, 'write', 'crontabs.rules.example.com');
    const r = await s.admin.request('POST', CRD_PATH, crd);
    assert.equal(r.status, 201, r.text.slice(0, 500));
    const path = '/apis/rules.example.com/v1/namespaces/default/crontabs';
    await waitEstablished(s, 'crontabs.rules.example.com', path);
    const refused = await s.admin.request('POST', path, crontab('a', { replicas: 999, image: 'x' }, 'rules.example.com'));
    const accepted = await s.admin.request('POST', path, crontab('b', { replicas: 999, image: 'r999' }, 'rules.example.com'));
    const served = await loop.stop();
    assert.equal(refused.status, 422, refused.text.slice(0, 300));
    assert.match((refused.json as Json).message, /spec: Invalid value: "object": replicas 999 needs image r999/);
    assert.equal(accepted.status, 201, accepted.text.slice(0, 300));
    t.diagnostic(`${served} GETs sent and answered while the worker checked the write (reported; only > 0 asserted)`);
    assert.ok(served > 0, 'no GET was sent and answered while the worker checked the write');
  });

  it('validates a custom resource against a pattern that takes RE2JS seconds to compile, other clients served meanwhile', async (t) => {
    const group = 'slowpattern.example.com';
    const crd = crontabCrd({ group }) as Json;
    // Accepted within the check budget, but RE2JS takes over a second to compile it (Go's compiler milliseconds).
    const pattern = `^${'[a-z]?'.repeat(120_000)}$`;
    schemaOf(crd).properties.spec.properties.cronSpec.pattern = pattern;
    assert.equal((await s.admin.request('POST', CRD_PATH, crd)).status, 201);
    const path = `/apis/${group}/v1/namespaces/default/crontabs`;
    await waitEstablished(s, `crontabs.${group}`, path);
    const loop = getLoop(s, 'patterns', `crontabs.${group}`);
    const accepted = await s.admin.request('POST', path, crontab('a', { cronSpec: 'abc' }, group));
    const refused = await s.admin.request('POST', path, crontab('b', { cronSpec: 'ABC' }, group));
    const served = await loop.stop();
    assert.equal(accepted.status, 201, accepted.text.slice(0, 300));
    assert.equal(refused.status, 422, refused.text.slice(0, 300));
    assert.deepEqual(
      ((refused.json as Json).details.causes as Json[]).map((c) => [c.reason, c.field, c.message]),
      [['FieldValueInvalid', 'spec.cronSpec', `Invalid value: "ABC": spec.cronSpec in body should match '${pattern}'`]],
    );
    t.diagnostic(`${served} GETs sent and answered while the worker checked the write (reported; only > 0 asserted)`);
    assert.ok(served > 0, 'no GET was sent and answered while the worker checked the write');
    // Once answered, the same values are not asked again; an update that leaves the value alone tests nothing.
    const again = await s.admin.request('POST', path, crontab('c', { cronSpec: 'abc' }, group));
    assert.equal(again.status, 201, again.text.slice(0, 300));
  });

  it('refuses an invalid pattern and an ill-typed rule with the causes of the synchronous check', async () => {
    const bad = crontabCrd({ group: 'bad.example.com' }) as Json;
    schemaOf(bad).properties.spec.properties.cronSpec.pattern = '(';
    const r = await s.admin.request('POST', CRD_PATH, bad);
    assert.equal(r.status, 422, r.text.slice(0, 300));
    assert.deepEqual((r.json as Json).details.causes, [
      {
        reason: 'FieldValueInvalid',
        field: PATTERN_FIELD,
        message: 'Invalid value: "(": must be a valid regular expression, but isn\'t: error parsing regexp: missing closing ): `(`',
      },
    ]);
    const typed = crontabCrd({ group: 'bad.example.com' }) as Json;
    schemaOf(typed).properties.spec['x-kubernetes-validations'] = [{ rule: 'self.replicas' }];
    const t = await s.admin.request('POST', CRD_PATH, typed);
    assert.equal(t.status, 422, t.text.slice(0, 300));
    assert.deepEqual(
      ((t.json as Json).details.causes as Json[]).map((c) => [c.field, c.message]),
      [
        [
          'spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule',
          'Invalid value: {"rule":"self.replicas"}: cel expression must evaluate to a bool',
        ],
      ],
    );
  });
});
