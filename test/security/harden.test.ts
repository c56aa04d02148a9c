// Defence in depth against prototype pollution: `gatehouse serve` removes the `__proto__`
// accessor and freezes the built-in prototypes (gateway/cli/harden.ts). The
// in-process checks run in a child process, since hardening this test runner
// would hide what prototype.test.ts checks; the last test is a pollution
// attempt with kubectl against a real, hardened `gatehouse serve`.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Kubectl, ROOT, findKubectl, startGatehouse, stopAll, tempDir } from '../e2e/helpers.js';

after(stopAll);

const PROBE = `
import { hardenIntrinsics } from ${JSON.stringify(join(ROOT, 'gateway/cli/harden.ts'))};
const out = {};
const attempt = (name, f) => { try { f(); out[name] = 'ok'; } catch (e) { out[name] = e.constructor.name; } };
const h = hardenIntrinsics();
out.again = hardenIntrinsics() === h;
out.tamed = h.tamed > 0;
const a = {}; a['__proto__'] = { polluted: 'yes' };
out.ownProto = Object.hasOwn(a, '__proto__') && a.polluted === undefined && Object.getPrototypeOf(a) === Object.prototype;
out.inProto = '__proto__' in {};
attempt('objectProto', () => { Object.prototype.polluted = 'yes'; });
attempt('viaConstructor', () => { ({}).constructor.prototype.polluted = 'yes'; });
attempt('objectAssignReplaced', () => { ({}).constructor.assign = 'yes'; });
attempt('arrayProto', () => { [].constructor.prototype.polluted = 'yes'; });
attempt('functionProto', () => { ({}).constructor.constructor.prototype.polluted = 'yes'; });
attempt('stringProto', () => { ''.constructor.prototype.polluted = 'yes'; });
attempt('defineOnProto', () => { Object.defineProperty(Object.prototype, 'polluted', { value: 'yes' }); });
// RegExp.prototype keeps its members as they are (V8's fast path), but takes no new one; RegExp itself is locked.
attempt('regexpProtoAdd', () => { RegExp.prototype.polluted = 'yes'; });
attempt('regexpCtorReplaced', () => { RegExp.prototype.constructor.escape = 'yes'; });
out.regexpWorks = /^[a-z]+$/.test('abc') && !/^[a-z]+$/.test('a-b');
out.clean = ({}).polluted === undefined && [].polluted === undefined && ''.polluted === undefined;
// Ordinary code keeps working: the override mistake is tamed.
attempt('ownToString', () => { const o = {}; o.toString = () => 'mine'; if (String(o) !== 'mine') throw new Error('not own'); });
attempt('errorName', () => { class E extends Error { constructor() { super('m'); this.name = 'E'; } } const e = new E(); if (e.name !== 'E' || Error.prototype.name !== 'Error') throw new Error('name'); });
attempt('errorMessage', () => { const e = new Error(); e.message = 'late'; if (e.message !== 'late') throw new Error('message'); });
attempt('protoConstructor', () => { function F() {} F.prototype = Object.create(Object.prototype); F.prototype.constructor = F; if (new F().constructor !== F) throw new Error('ctor'); });
attempt('errorStatics', () => { const t = Error.stackTraceLimit; Error.stackTraceLimit = 2; Error.stackTraceLimit = t; });
attempt('assignOnFrozenProtoItself', () => { Object.prototype.toString = () => 'x'; });
out.json = JSON.stringify(JSON.parse('{"__proto__":{"a":1},"b":[1]}')) === '{"__proto__":{"a":1},"b":[1]}';
console.log(JSON.stringify(out));
`;

describe('hardened intrinsics (gatehouse serve)', () => {
  it('a write through a built-in prototype throws, `__proto__` is an own key, and ordinary assignments still work', () => {
    const file = join(tempDir('harden'), 'probe.mts');
    writeFileSync(file, PROBE);
    const r = spawnSync(process.execPath, ['--import', 'tsx', file], { cwd: ROOT, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      again: true,
      tamed: true,
      ownProto: true,
      inProto: false,
      objectProto: 'TypeError',
      viaConstructor: 'TypeError',
      objectAssignReplaced: 'TypeError',
      arrayProto: 'TypeError',
      functionProto: 'TypeError',
      stringProto: 'TypeError',
      defineOnProto: 'TypeError',
      regexpProtoAdd: 'TypeError',
      regexpCtorReplaced: 'TypeError',
      regexpWorks: true,
      clean: true,
      ownToString: 'ok',
      errorName: 'ok',
      errorStatics: 'ok',
      errorMessage: 'ok',
      protoConstructor: 'ok',
      assignOnFrozenProtoItself: 'TypeError',
      json: true,
    });
  });

  const kubectlPath = findKubectl();
  it(
    'the prototype-pollution reproduction with kubectl: both patches refused with 422, later objects clean',
    { skip: kubectlPath ? false : 'kubectl not found' },
    async () => {
      const gh = await startGatehouse();
      const k = new Kubectl(kubectlPath!, gh.kubeconfig);
      await k.ok(['create', 'configmap', 'pp', '--from-literal=k=v']);
      for (const type of ['strategic', 'merge']) {
        const r = await k.run(['patch', 'configmap', 'pp', `--type=${type}`, '-p', '{"metadata":{"labels":{"__proto__":{"polluted":"yes"}}}}']);
        assert.notEqual(r.code, 0);
        assert.match(r.stderr, /is invalid: metadata\.labels/);
      }
      const file = join(tempDir('clean'), 'clean.json');
      writeFileSync(file, '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"clean"},"data":{"a":"1"}}');
      const created = JSON.parse(await k.ok(['create', '--raw', '/api/v1/namespaces/default/configmaps', '-f', file]));
      assert.deepEqual(
        created.metadata.managedFields.map((e: { fieldsV1: unknown }) => e.fieldsV1),
        [{ 'f:data': { '.': {}, 'f:a': {} } }],
      );
      assert.equal((await k.ok(['get', 'configmap', 'pp', '-o', 'jsonpath={.metadata.labels}'])).trim(), '');
      await gh.stop();
    },
  );
});
