// Quantities as kube-apiserver writes them back: apimachinery's
// TestQuantityString (each canonical form kept on parse, each alternate
// written canonically, negatives alike), TestQuantityParseEmit and the
// rounding rows of TestQuantityParse; then the rewrite of every Quantity
// field a built-in kind's schema names, and only those.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalQuantity, canonicalQuantityValue } from '../../lib/registry/builtins/quantities.js';
import { builtinSchemaOf } from '../../lib/schema/index.js';
import { rewriteQuantities } from '../../lib/schema/quantities.js';
import { deepFreezeJson } from '../../lib/api/json.js';

/** TestQuantityString: [canonical, alternate] ('' = none). */
const STRING_TABLE: ReadonlyArray<readonly [string, string]> = [
  ['1Gi', '1024Mi'],
  ['300Mi', '307200Ki'],
  ['6Ki', ''],
  ['1001Gi', '1025024Mi'],
  ['1Ti', '1024Gi'],
  ['5', '5000m'],
  ['500m', '0.5'],
  ['1G', '1000M'],
  ['1G', '0.001T'],
  ['1m', '1000u'],
  ['80m', ''],
  ['1080m', '1.08'],
  ['1080m', '1080000000n'],
  ['300M', ''],
  ['1T', ''],
  ['1234567M', ''],
  ['1234567m', ''],
  ['3k', ''],
  ['1025', ''],
  ['0', ''],
  ['1e9', '.001e12'],
  ['1e-3', '0.001e0'],
  ['1e-9', '1000e-12'],
  ['80e-3', ''],
  ['300e6', ''],
  ['1e12', ''],
  ['1e3', ''],
  ['3e3', ''],
  ['0', '00'],
  ['1n', ''],
  ['80n', ''],
  ['1080n', ''],
  ['1u', ''],
  ['80u', ''],
  ['1080u', ''],
];

describe('canonical quantities (apimachinery resource.Quantity)', () => {
  it("keeps each of kube's canonical forms and writes each alternate in it, negatives too", () => {
    for (const [canonical, alternate] of STRING_TABLE) {
      assert.equal(canonicalQuantity(canonical), canonical, canonical);
      if (alternate) assert.equal(canonicalQuantity(alternate), canonical, alternate);
      if (canonical !== '0') {
        assert.equal(canonicalQuantity(`-${canonical}`), `-${canonical}`);
        if (alternate) assert.equal(canonicalQuantity(`-${alternate}`), `-${canonical}`, `-${alternate}`);
      }
    }
  });

  it('TestQuantityParseEmit', () => {
    const table = [
      ['1Ki', '1Ki'],
      ['1Mi', '1Mi'],
      ['1Gi', '1Gi'],
      ['1024Mi', '1Gi'],
      ['1000M', '1G'],
      ['.001Ki', '1024m'],
      ['.000001Ki', '1024u'],
      ['.000000001Ki', '1024n'],
      ['.000000000001Ki', '2n'],
    ] as const;
    for (const [input, out] of table) {
      assert.equal(canonicalQuantity(input), out, input);
      assert.equal(canonicalQuantity(`-${input}`), `-${out}`, `-${input}`);
    }
  });

  it('rounds sub-nano amounts up, caps binary ones at int64, and keeps the format the input chose', () => {
    const table = [
      ['1000m', '1'],
      ['1.5Gi', '1536Mi'],
      ['0.5Mi', '512Ki'],
      ['1.1Ki', '1126400m'],
      ['100.035Ki', '102435840m'],
      ['0.05Gi', '53687091200m'],
      ['100M', '100M'],
      ['1.5', '1500m'],
      ['1.5k', '1500'],
      ['1000', '1k'],
      ['1e3', '1e3'],
      ['1.2e3', '1200'],
      ['1.3E+6', '1300e3'],
      ['1.7E18', '1700e15'],
      ['1.01E', '1010P'],
      ['12E', '12E'],
      ['3.001n', '4n'],
      ['1.1E-9', '2e-9'],
      ['0.0000000001', '1n'],
      ['0.00000012345', '124n'],
      ['0.5e-9', '1e-9'],
      ['9Ei', '9223372036854775807'],
      ['9223372036854775807Ki', '9223372036854775807'],
      ['0.0005k', '500m'],
      ['100.035k', '100.035k'], // 100035 × 10^0: already canonical to ParseQuantity, so kept
      ['0Ki', '0'],
      ['0.000m', '0'],
      // ParseQuantity keeps an input string it finds canonical, as written.
      ['1.', '1.'],
      ['+1', '+1'],
      ['007', '007'],
      // Past E, a decimal SI exponent has no suffix and kube writes none.
      ['1000E', '1'],
    ] as const;
    for (const [input, out] of table) assert.equal(canonicalQuantity(input), out, input);
    assert.equal(canonicalQuantity('lots'), undefined);
    assert.equal(canonicalQuantity('1i'), undefined);
    assert.equal(canonicalQuantityValue(0.5), '500m', 'a JSON number is decoded as its text');
    assert.equal(canonicalQuantityValue(2), '2');
    assert.equal(canonicalQuantityValue('lots'), 'lots', 'not a quantity: left for validation to refuse');
  });

  it("rewrites every Quantity the kind's schema names, nothing else, copying frozen parts", () => {
    const pod = builtinSchemaOf('', 'v1', 'Pod')!;
    const status = deepFreezeJson({ phase: 'Pending', resize: '1000m' });
    const obj: Record<string, unknown> = {
      metadata: { name: 'p', annotations: { a: '1000m' } },
      spec: {
        containers: [{ name: 'c', image: '1000m', resources: { requests: { cpu: '1000m', memory: '1.5Gi' }, limits: { cpu: 2, ['__proto__']: '0.5' } } }],
        overhead: { cpu: '0.25' },
      },
      status,
    };
    rewriteQuantities(pod, obj, canonicalQuantityValue);
    const c = (obj['spec'] as { containers: Array<Record<string, Record<string, Record<string, unknown>>>> }).containers[0]!;
    assert.deepEqual(c['resources']!['requests'], { cpu: '1', memory: '1536Mi' });
    assert.equal(c['resources']!['limits']!['cpu'], '2');
    assert.ok(Object.hasOwn(c['resources']!['limits']!, '__proto__'));
    assert.equal(Object.getOwnPropertyDescriptor(c['resources']!['limits']!, '__proto__')!.value, '500m');
    assert.equal(c['image'], '1000m', 'a string field that reads like a quantity is not one');
    assert.deepEqual((obj['spec'] as Record<string, unknown>)['overhead'], { cpu: '250m' });
    assert.equal((obj['metadata'] as { annotations: Record<string, string> }).annotations['a'], '1000m');
    assert.equal(obj['status'], status, 'no quantity in it: the frozen status is kept as is');

    const quota = builtinSchemaOf('', 'v1', 'ResourceQuota')!;
    const hard = deepFreezeJson({ 'requests.cpu': '1000m', pods: '10' });
    const q: Record<string, unknown> = { spec: { hard }, status: { hard, used: { pods: '0.000m' } } };
    rewriteQuantities(quota, q, canonicalQuantityValue);
    assert.deepEqual((q['spec'] as Record<string, unknown>)['hard'], { 'requests.cpu': '1', pods: '10' });
    assert.equal(hard['requests.cpu'], '1000m', 'a frozen map is copied, not written into');
    assert.deepEqual((q['status'] as Record<string, unknown>)['used'], { pods: '0' });
  });
});
