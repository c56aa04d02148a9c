// isHopByHopAnyCase, the answer side's test of a backend's header names as sent: it must say what
// isHopByHop says of the lower-cased name, for every spelling, while lower-casing only at the lengths
// a hop-by-hop name has.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isHopByHop, isHopByHopAnyCase } from '../../gateway/aggregation/forwardrules.js';

describe('isHopByHopAnyCase (gateway/aggregation/forwardrules.ts)', () => {
  it('agrees with isHopByHop of the lower-cased name, in any case', () => {
    const names = [
      'Connection',
      'KEEP-ALIVE',
      'keep-alive',
      'Proxy-Connection',
      'Proxy-Authenticate',
      'proxy-authorization',
      'TE',
      'Te',
      'Trailer',
      'Transfer-Encoding',
      'Upgrade',
      'Content-Type',
      'Content-Length',
      'Date',
      'Audit-Id',
      'X-Kubernetes-PF-FlowSchema-UID',
      'Cache-Control',
      'Connectiom',
      'Upgradé',
      'Tè',
      '',
    ];
    for (const n of names) assert.equal(isHopByHopAnyCase(n), isHopByHop(n.toLowerCase()), n);
    assert.equal(isHopByHopAnyCase('Transfer-Encoding'), true);
    assert.equal(isHopByHopAnyCase('Content-Type'), false);
  });
});
