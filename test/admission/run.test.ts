// The admission runner (backends/core/admission/run.ts): plugins run in
// order, the first refusal stops the phase, a mutating plugin's object is
// what the next one sees; and a phase whose plugins all answer synchronously
// answers synchronously (no promise, so the write path awaits nothing),
// while a plugin that waits is awaited before the next one runs.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { mutate, validate } from '../../backends/core/admission/run.js';
import type { Admission, AdmissionAttributes, MutatingPlugin, ValidatingPlugin } from '../../backends/core/admission/types.js';
import type { CoreEnv } from '../../backends/core/env.js';
import type { KObject } from '../../lib/api/meta.js';
import { forbiddenMessage } from '../../lib/api/status.js';

const object: KObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c1', namespace: 'default' } };
const attrs: AdmissionAttributes = {
  operation: 'CREATE',
  object,
  oldObject: undefined,
  kind: { group: '', version: 'v1', kind: 'ConfigMap' },
  resource: { group: '', version: 'v1', resource: 'configmaps' },
  subresource: '',
  namespace: 'default',
  name: 'c1',
  user: { username: 'u', groups: [] },
  dryRun: false,
  options: { kind: 'CreateOptions' },
};
const envWith = (admission: Admission) => ({ admission }) as unknown as CoreEnv;

/** A validating plugin that notes its name in `seen`; `wait` makes it answer with a promise. */
function noting(name: string, seen: string[], wait = false, refuse = false): ValidatingPlugin {
  return {
    name,
    validate() {
      const judge = () => {
        seen.push(name);
        if (refuse) throw forbiddenMessage(`refused by ${name}`);
      };
      if (!wait) return judge();
      return new Promise<void>((res) => setImmediate(res)).then(judge);
    },
  };
}

describe('admission runner: validating', () => {
  it('answers synchronously when no plugin waits, every plugin asked in order', () => {
    const seen: string[] = [];
    const out = validate(envWith({ mutating: [], validating: [noting('a', seen), noting('b', seen)] }), attrs);
    assert.equal(out, undefined);
    assert.deepEqual(seen, ['a', 'b']);
  });

  it('awaits a plugin that waits before asking the next', async () => {
    const seen: string[] = [];
    const out = validate(envWith({ mutating: [], validating: [noting('a', seen), noting('b', seen, true), noting('c', seen)] }), attrs);
    assert.ok(out instanceof Promise);
    assert.deepEqual(seen, ['a']);
    await out;
    assert.deepEqual(seen, ['a', 'b', 'c']);
  });

  it('stops at the first refusal, synchronous or awaited', async () => {
    const seen: string[] = [];
    assert.throws(() => validate(envWith({ mutating: [], validating: [noting('a', seen, false, true), noting('b', seen)] }), attrs), /refused by a/);
    assert.deepEqual(seen, ['a']);
    const later: string[] = [];
    await assert.rejects(validate(envWith({ mutating: [], validating: [noting('a', later, true, true), noting('b', later)] }), attrs)!, /refused by a/);
    assert.deepEqual(later, ['a']);
  });
});

describe('admission runner: mutating', () => {
  const labelling = (key: string, wait: boolean): MutatingPlugin => ({
    name: key,
    admit(a) {
      const o = a.object!;
      const next = { ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, [key]: 'y' } } };
      return wait ? new Promise<KObject>((res) => setImmediate(() => res(next))) : next;
    },
  });
  const keeping: MutatingPlugin = { name: 'keep', admit: () => undefined };

  it('answers the object itself, synchronously, when no plugin changes it or waits', () => {
    assert.equal(mutate(envWith({ mutating: [keeping], validating: [] }), attrs), object);
    assert.equal(mutate(envWith({ mutating: [], validating: [] }), attrs), object);
  });

  it('gives each plugin the object the one before produced, across waits', async () => {
    const out = mutate(envWith({ mutating: [labelling('a', false), labelling('b', true), keeping, labelling('c', false)], validating: [] }), attrs);
    assert.ok(out instanceof Promise);
    assert.deepEqual((await out)?.metadata.labels, { a: 'y', b: 'y', c: 'y' });
  });
});
