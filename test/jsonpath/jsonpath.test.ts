// kube's JSONPath (lib/jsonpath) as a table: each path form of client-go's
// grammar with what kube selects, and the forms kube's parser refuses with
// its words — among them jsonpath-plus's extensions (script indexes, `$..`
// functions), which must never reach an evaluator from a CRD.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compilePath, selectAll } from '../../lib/jsonpath/index.js';

const obj = {
  metadata: { name: 'n', labels: { 'app.kubernetes.io/name': 'x', plain: 'p' } },
  spec: {
    replicas: 3,
    list: [10, 20, 30, 40],
    items: [
      { name: 'a', port: 80, ready: true },
      { name: 'b', port: 443, ready: false },
      { name: 'c', port: 8080 },
    ],
  },
  status: {
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'Synced', status: 'False' },
    ],
  },
};

const select = (path: string): unknown[] => {
  const c = compilePath(path);
  if ('error' in c) throw new Error(`${path}: ${c.error}`);
  return selectAll(obj, c.path);
};

describe('kube JSONPath: what each form selects', () => {
  const table: Array<[string, unknown[]]> = [
    ['.spec.replicas', [3]],
    ['.spec.missing', []],
    ['.spec.replicas.deeper', []],
    ['.spec.list[0]', [10]],
    ['.spec.list[-1]', [40]],
    ['.spec.list[1:3]', [20, 30]],
    ['.spec.list[::2]', [10, 30]],
    ['.spec.list[:2]', [10, 20]],
    ['.spec.list[*]', [10, 20, 30, 40]],
    ['.spec.list[9]', []],
    ['.spec.items[*].name', ['a', 'b', 'c']],
    ['.spec.items[?(@.name == "b")].port', [443]],
    [".spec.items[?(@.name=='c')].port", [8080]],
    ['.spec.items[?(@.port > 100)].name', ['b', 'c']],
    ['.spec.items[?(@.port <= 443)].name', ['a', 'b']],
    ['.spec.items[?(@.name != "a")].name', ['b', 'c']],
    ['.spec.items[?(@.ready)].name', ['a', 'b']],
    ['.spec.items[?(@.ready == true)].name', ['a']],
    ['.status.conditions[?(@.type=="Ready")].status', ['True']],
    ['.spec.items[0,2].name', ['a', 'c']],
    ["['spec']['replicas']", [3]],
    // A bracketed key is parsed as `.key`: its dots still split it, unless escaped (kubectl's known rule).
    [".metadata.labels['app.kubernetes.io/name']", []],
    [".metadata.labels['app\\.kubernetes\\.io/name']", ['x']],
    // A name runs to the next terminator: `length()` is a field like any other, never a call.
    ['.spec.list.length()', []],
    ['.metadata.labels.app\\.kubernetes\\.io/name', ['x']],
    ['.metadata.labels.*', ['x', 'p']],
    ['..port', [80, 443, 8080]],
    ['$.spec.replicas', [3]],
    // Comparing unlike kinds is an error in kube's filter: nothing is selected.
    ['.spec.items[?(@.port == "80")].name', []],
  ];
  for (const [path, want] of table) {
    it(`${path} → ${JSON.stringify(want)}`, () => assert.deepEqual(select(path), want));
  }

  it('walks own properties only: __proto__ is a key like any other', () => {
    const o = JSON.parse('{"__proto__": {"polluted": 1}, "a": {}}');
    const c = compilePath('.__proto__.polluted');
    assert.ok('path' in c);
    assert.deepEqual(selectAll(o, c.path), [1]);
    const d = compilePath('.a.constructor');
    assert.ok('path' in d);
    assert.deepEqual(selectAll(o, d.path), []);
  });
});

describe("kube JSONPath: what kube's parser refuses, in its words", () => {
  const table: Array<[string, string]> = [
    ['.spec.list[(@.length-1)]', 'invalid array index (@.length-1)'],
    ['.spec.list[?(@.x == 1)', 'unclosed array expect ]'],
    ['.spec.list[0', 'unterminated array'],
    ['.spec.list[a]', 'invalid array index a'],
    ['.spec.items[?(@.name == "b"', 'unterminated filter'],
    ['.spec.list[0]()', "unrecognized character in action: U+0028 '('"],
    ['.spec[?(@.x && 1)]', "unrecognized character in action: U+0026 '&'"],
    ['.spec.list[`x`]', 'invalid array index `x`'],
    ['.spec.items[?(@.name == nope)]', 'unrecognized identifier nope'],
  ];
  for (const [path, error] of table) {
    it(`${path}: ${error}`, () => assert.deepEqual(compilePath(path), { error }));
  }
});
