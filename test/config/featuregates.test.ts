// The feature-gate table: stages and defaults, errors naming the gate, the
// locked GA gate, start-time warnings, and a gate that really switches its
// behaviour (APIResponseCompression through a started server).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FEATURE_GATE_DEFAULTS, FEATURE_GATE_SPECS, featureGateWarnings, parseFeatureGates } from '../../gateway/config/featuregates.js';
import { startTestServer } from '../helpers/server.js';

describe('feature gates', () => {
  it('every gate has a stage, and alpha gates are off by default, beta and GA on', () => {
    for (const [name, s] of Object.entries(FEATURE_GATE_SPECS)) {
      assert.ok(['ALPHA', 'BETA', 'GA', 'DEPRECATED'].includes(s.stage), name);
      if (s.stage === 'ALPHA') assert.equal(s.default, false, name);
      if (s.stage === 'BETA' || s.stage === 'GA') assert.equal(s.default, true, name);
      assert.equal(FEATURE_GATE_DEFAULTS[name as keyof typeof FEATURE_GATE_DEFAULTS], s.default);
    }
  });

  it('errors name the gate: unknown, not a boolean, a locked gate turned off, no value', () => {
    assert.throws(() => parseFeatureGates('NoSuchGate=true'), /unrecognized feature gate "NoSuchGate"/);
    assert.throws(() => parseFeatureGates('CBORServingAndStorage=yes'), /invalid value of CBORServingAndStorage: yes/);
    assert.throws(
      () => parseFeatureGates('StructuredAuthorizationConfiguration=false'),
      /cannot set feature gate StructuredAuthorizationConfiguration to false, feature is locked to true/,
    );
    assert.throws(() => parseFeatureGates('CBORServingAndStorage'), /missing bool value/);
    assert.throws(() => parseFeatureGates('__proto__=true'), /unrecognized feature gate "__proto__"/);
  });

  it('setting a GA gate warns, as kube-apiserver does; alpha and beta gates do not', () => {
    const g = parseFeatureGates('StructuredAuthorizationConfiguration=true,CBORServingAndStorage=true');
    assert.deepEqual(featureGateWarnings(g), ['Setting GA feature gate StructuredAuthorizationConfiguration=true. It will be removed in a future release.']);
    const later = parseFeatureGates('APIResponseCompression=false', g);
    assert.equal(later.CBORServingAndStorage, true, 'a later --feature-gates adds to an earlier one');
    assert.equal(featureGateWarnings(later).length, 1);
    assert.deepEqual(featureGateWarnings(FEATURE_GATE_DEFAULTS), []);
  });

  it('APIResponseCompression=false: large GET answers are not gzipped; on (the default) they are', async () => {
    for (const on of [true, false]) {
      const s = await startTestServer({ flags: on ? [] : ['--feature-gates=APIResponseCompression=false'] });
      try {
        const big = 'x'.repeat(20_000);
        assert.equal(
          (
            await s.admin.request('POST', '/api/v1/namespaces/default/configmaps', {
              apiVersion: 'v1',
              kind: 'ConfigMap',
              metadata: { name: 'big' },
              data: { big },
            })
          ).status,
          201,
        );
        const r = await s.admin.request('GET', '/api/v1/namespaces/default/configmaps/big', undefined, { 'accept-encoding': 'gzip' });
        assert.equal(r.status, 200);
        assert.equal(r.headers['content-encoding'], on ? 'gzip' : undefined);
        assert.equal(r.json.data.big, big);
      } finally {
        await s.close();
      }
    }
  });

  it('a GA gate set on the command line is logged at start', async () => {
    const s = await startTestServer({ flags: ['--feature-gates=StructuredAuthorizationConfiguration=true'] });
    try {
      assert.ok(
        s.logs.some((l) => l.includes('Setting GA feature gate StructuredAuthorizationConfiguration=true')),
        s.logs.join('\n'),
      );
    } finally {
      await s.close();
    }
  });
});
