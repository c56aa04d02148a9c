// apiextensions.k8s.io/v1 CustomResourceDefinition as a served type: discovery,
// kube's defaults, and validation of the CRD itself (422 naming the field).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestServer, type TestServer } from '../helpers/server.js';
import { CRD_PATH, crontabCrd } from './fixtures.js';
import { eventually } from '../helpers/eventually.js';

type Json = Record<string, any>;

function variant(mutate: (crd: Json) => void): Json {
  const crd = crontabCrd({ group: 'valid.example.com', plural: 'widgets', kind: 'Widget' }) as Json;
  mutate(crd);
  return crd;
}

describe('CustomResourceDefinition type', () => {
  let s: TestServer;
  before(async () => {
    s = await startTestServer();
  });
  after(async () => {
    await s.close();
  });

  it('is discovered under apiextensions.k8s.io/v1 with kube short names, category and status', async () => {
    const r = await s.admin.request('GET', '/apis/apiextensions.k8s.io/v1');
    assert.equal(r.status, 200, r.text);
    const crd = (r.json as Json).resources.find((x: Json) => x.name === 'customresourcedefinitions');
    assert.deepEqual(crd.shortNames, ['crd', 'crds']);
    assert.deepEqual(crd.categories, ['api-extensions']);
    assert.equal(crd.namespaced, false);
    assert.ok((r.json as Json).resources.some((x: Json) => x.name === 'customresourcedefinitions/status'));
  });

  it('defaults singular, listKind, conversion and storedVersions; clears a client status', async () => {
    const body = variant((c) => {
      delete c.spec.names.singular;
      c.status = { storedVersions: ['v9'], acceptedNames: { plural: 'x', kind: 'X' } };
    });
    const r = await s.admin.request('POST', `${CRD_PATH}?dryRun=All`, body);
    assert.equal(r.status, 201, r.text);
    const o = r.json as Json;
    assert.equal(o.spec.names.singular, 'widget');
    assert.equal(o.spec.names.listKind, 'WidgetList');
    assert.deepEqual(o.spec.conversion, { strategy: 'None' });
    assert.deepEqual(o.status.storedVersions, ['v1']);
    assert.equal(o.status.acceptedNames, undefined);
    assert.equal(o.metadata.generation, 1);
  });

  it("drops the zero values Go's encoding omits (omitempty), keeping a pointer's zero and the fields without omitempty", async () => {
    const body = variant((c) => {
      const v = c.spec.versions[0];
      v.deprecated = false;
      v.additionalPrinterColumns[0].priority = 0;
      v.additionalPrinterColumns[0].description = '';
      v.additionalPrinterColumns[0].format = '';
      v.selectableFields = [];
      c.spec.names.categories = [];
      c.spec.preserveUnknownFields = false;
      const root = v.schema.openAPIV3Schema;
      Object.assign(root, { description: '', title: '', nullable: false, required: [] });
      Object.assign(root.properties.spec, {
        description: '',
        pattern: undefined,
        patternProperties: {},
        'x-kubernetes-validations': [{ rule: 'self.replicas >= 0', message: '', fieldPath: '' }],
      });
      Object.assign(root.properties.spec.properties.replicas, { minimum: 0, exclusiveMinimum: false, format: '', enum: [] });
      Object.assign(root.properties.spec.properties.image, { default: '', minLength: 0, 'x-kubernetes-int-or-string': false });
    });
    const r = await s.admin.request('POST', `${CRD_PATH}?dryRun=All`, body);
    assert.equal(r.status, 201, r.text);
    const v = (r.json as Json).spec.versions[0];
    assert.equal('deprecated' in v, false);
    assert.deepEqual(v.additionalPrinterColumns[0], { name: 'Spec', type: 'string', jsonPath: '.spec.cronSpec' });
    assert.equal('selectableFields' in v, false);
    assert.equal('categories' in (r.json as Json).spec.names, false);
    assert.equal('preserveUnknownFields' in (r.json as Json).spec, false);
    assert.equal(v.served, true);
    const root = v.schema.openAPIV3Schema;
    assert.deepEqual(Object.keys(root).sort(), ['properties', 'type']);
    const spec = root.properties.spec;
    assert.deepEqual(Object.keys(spec).sort(), ['properties', 'type', 'x-kubernetes-validations']);
    assert.deepEqual(spec['x-kubernetes-validations'], [{ rule: 'self.replicas >= 0' }]);
    assert.deepEqual(spec.properties.replicas, { type: 'integer', minimum: 0 }, 'a *float64 set to 0 is written');
    assert.deepEqual(spec.properties.image, { type: 'string', default: '', minLength: 0 }, 'so are a *JSON and a *int64');
  });

  const undecodable: Array<[string, Json, string]> = [
    [
      'a wrong type inside items',
      { type: 'array', items: { type: 5 } },
      'json: cannot unmarshal number into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties.properties.items of type string',
    ],
    [
      'a fraction for an integer, deeper inside items (the outermost union is named, the innermost type kept)',
      { type: 'array', items: { type: 'object', properties: { x: { type: 'array', items: { type: 'string', maxLength: 1.5 } } } } },
      'json: cannot unmarshal number 1.5 into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties.properties.items of type int64',
    ],
    [
      'a wrong type inside additionalProperties',
      { type: 'object', additionalProperties: { type: 'string', required: 'x' } },
      'json: cannot unmarshal string into Go struct field JSONSchemaProps.spec.versions.schema.openAPIV3Schema.properties.properties.additionalProperties of type []string',
    ],
    ['additionalProperties neither a boolean nor a schema', { type: 'object', additionalProperties: 5 }, 'boolean or JSON schema expected'],
  ];
  for (const [what, list, message] of undecodable) {
    it(`answers kube's 400 decode error for ${what}`, async () => {
      const body = variant((c) => {
        c.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.list = list;
      });
      const r = await s.admin.request('POST', `${CRD_PATH}?dryRun=All`, body);
      assert.equal(r.status, 400, r.text);
      assert.equal((r.json as Json).reason, 'BadRequest');
      assert.equal((r.json as Json).message, `CustomResourceDefinition in version "v1" cannot be handled as a CustomResourceDefinition: ${message}`);
    });
  }

  const bad: Array<[string, (c: Json) => void, RegExp]> = [
    [
      'a name that is not <plural>.<group>',
      (c) => {
        c.metadata.name = 'other.valid.example.com';
      },
      /metadata\.name: Invalid value: "other\.valid\.example\.com": must be spec\.names\.plural\+"\."\+spec\.group/,
    ],
    [
      'a group without a dot',
      (c) => {
        c.spec.group = 'nodots';
        c.metadata.name = 'widgets.nodots';
      },
      /spec\.group: Invalid value: "nodots": should be a domain with at least one dot/,
    ],
    [
      'no group',
      (c) => {
        delete c.spec.group;
        c.metadata.name = 'widgets.';
      },
      /spec\.group: Required value/,
    ],
    [
      'a bad scope',
      (c) => {
        c.spec.scope = 'Global';
      },
      /spec\.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"/,
    ],
    [
      'an upper-case plural',
      (c) => {
        c.spec.names.plural = 'Widgets';
        c.metadata.name = 'Widgets.valid.example.com';
      },
      /spec\.names\.plural: Invalid value: "Widgets": a DNS-1035 label/,
    ],
    [
      'a kind equal to listKind',
      (c) => {
        c.spec.names.listKind = 'Widget';
      },
      /spec\.names\.listKind: Invalid value: "Widget": kind and listKind may not be the same/,
    ],
    [
      'a bad short name',
      (c) => {
        c.spec.names.shortNames = ['ok', 'Not_ok'];
      },
      /spec\.names\.shortNames\[1\]: Invalid value: "Not_ok"/,
    ],
    [
      'no kind',
      (c) => {
        delete c.spec.names.kind;
        delete c.spec.names.singular;
      },
      /spec\.names\.kind: Required value/,
    ],
    [
      'two storage versions',
      (c) => {
        c.spec.versions.push({ ...c.spec.versions[0], name: 'v2' });
      },
      /spec\.versions: Invalid value: .*must have exactly one version marked as storage version/,
    ],
    [
      'no storage version',
      (c) => {
        c.spec.versions[0].storage = false;
      },
      /must have exactly one version marked as storage version/,
    ],
    [
      'duplicate versions',
      (c) => {
        c.spec.versions.push({ ...c.spec.versions[0], storage: false });
      },
      /must contain unique version names/,
    ],
    [
      'a bad version name',
      (c) => {
        c.spec.versions[0].name = 'V1';
      },
      /spec\.versions\[0\]\.name: Invalid value: "V1"/,
    ],
    [
      'no schema',
      (c) => {
        delete c.spec.versions[0].schema;
      },
      /spec\.versions\[0\]\.schema\.openAPIV3Schema: Required value: schemas are required/,
    ],
    [
      'a schema that is not an object',
      (c) => {
        c.spec.versions[0].schema.openAPIV3Schema = 'x';
      },
      /spec\.versions\[0\]\.schema\.openAPIV3Schema/,
    ],
    [
      'a column without jsonPath',
      (c) => {
        delete c.spec.versions[0].additionalPrinterColumns[1].jsonPath;
      },
      /spec\.versions\[0\]\.additionalPrinterColumns\[1\]\.jsonPath: Required value/,
    ],
    [
      'a column of a bad type',
      (c) => {
        c.spec.versions[0].additionalPrinterColumns[0].type = 'text';
      },
      /additionalPrinterColumns\[0\]\.type: Invalid value: "text": must be one of boolean,date,integer,number,string/,
    ],
    [
      'a scale path outside .spec',
      (c) => {
        c.spec.versions[0].subresources.scale.specReplicasPath = '.status.replicas';
      },
      /spec\.versions\[0\]\.subresources\.scale\.specReplicasPath: Invalid value: "\.status\.replicas": should be a json path under \.spec/,
    ],
    [
      'a webhook conversion without a client config',
      (c) => {
        c.spec.conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'] } };
      },
      /spec\.conversion\.webhook\.clientConfig: Required value: exactly one of url or service is required/,
    ],
    ...(
      [
        [
          'user info',
          'https://user:secret@hook.example.com/convert',
          /spec\.conversion\.webhook\.clientConfig\.url: Invalid value: "user:secret": user information is not permitted in the URL/,
        ],
        [
          'a query',
          'https://hook.example.com/convert?token=x',
          /spec\.conversion\.webhook\.clientConfig\.url: Invalid value: "token=x": query parameters are not permitted in the URL/,
        ],
        [
          'a fragment',
          'https://hook.example.com/convert#x',
          /spec\.conversion\.webhook\.clientConfig\.url: Invalid value: "x": fragments are not permitted in the URL/,
        ],
        [
          'http',
          'http://hook.example.com/convert',
          /spec\.conversion\.webhook\.clientConfig\.url: Invalid value: "http": 'https' is the only allowed URL scheme; desired format: https:\/\/host\[\/path\]/,
        ],
      ] as const
    ).map(([what, url, message]): [string, (c: Json) => void, RegExp] => [
      `a conversion webhook URL with ${what}`,
      (c) => {
        c.spec.conversion = { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url } } };
      },
      message,
    ]),
    [
      'a k8s.io group without the approval annotation',
      (c) => {
        c.spec.group = 'x.k8s.io';
        c.metadata.name = 'widgets.x.k8s.io';
      },
      /metadata\.annotations\[api-approved\.kubernetes\.io\]: Required value: protected groups must have approval annotation "api-approved\.kubernetes\.io", see https:\/\/github\.com\/kubernetes\/enhancements\/pull\/1111/,
    ],
    [
      'an unknown conversion strategy',
      (c) => {
        c.spec.conversion = { strategy: 'Magic' };
      },
      /spec\.conversion\.strategy: Unsupported value: "Magic"/,
    ],
  ];
  for (const [what, mutate, message] of bad) {
    it(`refuses ${what} with 422 naming the field`, async () => {
      const r = await s.admin.request('POST', CRD_PATH, variant(mutate));
      assert.equal(r.status, 422, r.text);
      assert.equal((r.json as Json).kind, 'Status');
      assert.equal((r.json as Json).details.kind, 'CustomResourceDefinition');
      assert.match((r.json as Json).message, message);
    });
  }

  it('keeps group and plural immutable, and scope once Established', async () => {
    const created = await s.admin.request(
      'POST',
      CRD_PATH,
      variant((c) => {
        c.spec.group = 'imm.example.com';
        c.metadata.name = 'widgets.imm.example.com';
      }),
    );
    assert.equal(created.status, 201, created.text);
    // The naming controller writes status right after create: read it back once it has.
    const o = await eventually("the naming controller's status", async () => {
      const g = (await s.admin.request('GET', `${CRD_PATH}/widgets.imm.example.com`)).json as Json;
      return g.status?.conditions ? g : undefined;
    });
    o.spec.names.plural = 'gadgets';
    o.spec.scope = 'Cluster';
    const r = await s.admin.request('PUT', `${CRD_PATH}/widgets.imm.example.com`, o);
    assert.equal(r.status, 422, r.text);
    assert.match((r.json as Json).message, /spec\.names\.plural: Invalid value: "gadgets": field is immutable/);
    assert.match((r.json as Json).message, /spec\.scope: Invalid value: "Cluster": field is immutable/, 'scope is immutable once Established');
  });
});
