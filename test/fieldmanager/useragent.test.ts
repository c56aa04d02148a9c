// The field manager a write gets from its User-Agent when it names none
// (kube's prefixFromUserAgent), including when agents alternate.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { managerFromUserAgent } from '../../lib/fieldmanager/index.js';

describe('managerFromUserAgent', () => {
  it('takes the text before the first slash', () => {
    assert.equal(managerFromUserAgent('kubectl/v1.30.1 (linux/amd64) kubernetes/7c48c2b'), 'kubectl');
    assert.equal(managerFromUserAgent('kube-controller-manager/v1.30.1'), 'kube-controller-manager');
    assert.equal(managerFromUserAgent('no-slash at all'), 'no-slash at all');
    assert.equal(managerFromUserAgent(undefined), '');
    assert.equal(managerFromUserAgent(''), '');
  });

  it('drops unprintable characters and stops at 128 bytes', () => {
    assert.equal(managerFromUserAgent('a\u0000b\tc/1'), 'abc');
    assert.equal(managerFromUserAgent(`${'x'.repeat(200)}/1`), 'x'.repeat(128));
    assert.equal(Buffer.byteLength(managerFromUserAgent(`${'é'.repeat(100)}/1`)), 128);
  });

  it('answers each agent its own manager when agents alternate', () => {
    for (let i = 0; i < 3; i++) {
      assert.equal(managerFromUserAgent('kubectl/v1.30'), 'kubectl');
      assert.equal(managerFromUserAgent('helm/v3'), 'helm');
      assert.equal(managerFromUserAgent('helm/v3'), 'helm');
      assert.equal(managerFromUserAgent(undefined), '');
    }
  });
});
