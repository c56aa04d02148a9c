// The OpenAPI documents follow registry swaps incrementally: a CRD change
// rebuilds its own group version's document and the index; every other group
// version keeps its document (the same object, not rebuilt), because the
// registry sync keeps every other CRD's ResourceType objects.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildOpenApiV3 } from '../../lib/openapi/live.js';
import { crdResourceTypes } from '../../lib/crd/resourcetypes.js';
import { builtinRegistry } from '../../lib/registry/index.js';
import type { KObject } from '../../lib/api/meta.js';
import { crontabCrd } from '../crd/fixtures.js';

const typesOf = (group: string) => crdResourceTypes(crontabCrd({ group }) as unknown as KObject);

describe('OpenAPI v3 documents across registry swaps', () => {
  it('rebuilds only the group versions whose types changed', () => {
    const base = builtinRegistry();
    const a = typesOf('a.example.com');
    const first = buildOpenApiV3(base.extend(a), 'v1.33.0');
    const second = buildOpenApiV3(base.extend([...a, ...typesOf('b.example.com')]), 'v1.33.0', first.built);
    assert.equal(second.document('api/v1'), first.document('api/v1'), 'a built-in group version is reused');
    assert.equal(second.document('apis/a.example.com/v1'), first.document('apis/a.example.com/v1'), 'an unchanged CRD is reused');
    assert.ok(second.document('apis/b.example.com/v1'), 'the new CRD has its document');
    assert.match(second.root.body.toString(), /apis\/b\.example\.com\/v1\?hash=/);
    // A changed CRD (new types) gets a new document.
    const third = buildOpenApiV3(base.extend(typesOf('a.example.com')), 'v1.33.0', second.built);
    assert.notEqual(third.document('apis/a.example.com/v1'), second.document('apis/a.example.com/v1'));
    assert.equal(third.document('apis/b.example.com/v1'), undefined, 'a deleted CRD has none');
  });
});
