// lib/openapi/v3proto.ts on the OpenAPI v3 shapes our documents do not use yet
// but gnostic's schema has (responses by code and default, references with a
// description, request bodies, security, servers, links, callbacks,
// discriminators), decoded with upstream's OpenAPIv3.proto; and the values
// gnostic's parser refuses, refused here too rather than dropped.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeOpenApiV3 } from '../../lib/openapi/v3proto.js';
import { decodeGnosticV3, EMPTY_DEFAULT } from './gnostic-v3.js';

const roundTrip = (doc: Record<string, unknown>) => decodeGnosticV3(encodeOpenApiV3(doc));
const minimal = (schemas: Record<string, unknown>) => ({ openapi: '3.0.0', info: { title: 't', version: 'v' }, paths: {}, components: { schemas } });

describe('the gnostic protobuf form of an OpenAPI v3 document', () => {
  it('keeps every oneof choice: additionalProperties false and a schema, references, scalar defaults, items, enums with null', () => {
    const doc = minimal({
      Closed: { type: 'object', additionalProperties: false, properties: { a: { type: 'string', enum: ['x', null], default: 'x', nullable: true } } },
      Open: { type: 'object', additionalProperties: { $ref: '#/components/schemas/Closed', description: 'a reference may be described' } },
      Flags: {
        type: 'object',
        properties: { on: { type: 'boolean', default: true }, n: { type: 'number', default: 1.5, maximum: 2.5, exclusiveMaximum: true } },
      },
      List: { type: 'array', items: { allOf: [{ $ref: '#/components/schemas/Open' }] }, maxItems: 3, 'x-kubernetes-list-type': 'atomic' },
      Either: {
        oneOf: [{ type: 'string' }, { type: 'integer', format: 'int64' }],
        not: { type: 'boolean' },
        discriminator: { propertyName: 'k', mapping: { a: '#/A' } },
      },
    });
    assert.deepEqual(roundTrip(doc), doc);
  });
  it('turns a default gnostic cannot hold (an object, a list, null) into an empty DefaultType, as kube serves it', () => {
    const doc = minimal({ A: { type: 'object', default: { k: 1 }, properties: { l: { type: 'array', default: [1], items: { type: 'integer' } } } } });
    const decoded = roundTrip(doc) as any;
    assert.equal(decoded.components.schemas.A.default, EMPTY_DEFAULT);
    assert.equal(decoded.components.schemas.A.properties.l.default, EMPTY_DEFAULT);
  });
  it('sorts paths, responses by code and default, extensions, parameters, bodies, security, servers, links and callbacks', () => {
    const doc = {
      openapi: '3.0.0',
      info: { title: 't', version: 'v', contact: { name: 'n' }, 'x-info': 1 },
      servers: [{ url: 'https://{host}', variables: { host: { default: 'a', enum: ['a', 'b'] } } }],
      paths: {
        'x-paths': { any: ['thing'] },
        '/p/{id}': {
          parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }, { $ref: '#/components/parameters/pretty' }],
          post: {
            operationId: 'create',
            requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' }, example: { a: 1 } } } },
            responses: {
              '200': {
                description: 'ok',
                headers: { 'Retry-After': { schema: { type: 'integer' } } },
                links: { self: { operationId: 'get', parameters: { id: '$response.body#/id' } } },
              },
              '4XX': { $ref: '#/components/responses/err' },
              default: { description: 'other' },
              'x-resp': true,
            },
            callbacks: { hook: { '{$request.body#/url}': { post: { responses: { '200': { description: 'ok' } } } } } },
            security: [{ bearer: [] }, { oauth: ['read'] }],
          },
        },
      },
      components: {
        parameters: { pretty: { name: 'pretty', in: 'query', schema: { type: 'boolean' } } },
        responses: { err: { description: 'error' } },
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          oauth: { type: 'oauth2', flows: { authorizationCode: { authorizationUrl: 'https://a', tokenUrl: 'https://t', scopes: { read: 'read it' } } } },
        },
      },
      tags: [{ name: 'core', externalDocs: { url: 'https://k8s.io' } }],
      'x-top': { nested: ['list'] },
    };
    assert.deepEqual(roundTrip(doc), doc);
  });
  it('keeps a property named like a prototype member as data', () => {
    const doc = minimal({ A: { type: 'object', properties: JSON.parse('{"__proto__": {"type": "string"}, "constructor": {"type": "integer"}}') } });
    assert.deepEqual(Object.keys((roundTrip(doc) as any).components.schemas.A.properties), ['__proto__', 'constructor']);
  });
  it("refuses what gnostic's parser refuses instead of dropping or coercing it", () => {
    const refused: Array<[Record<string, unknown>, RegExp]> = [
      [minimal({ A: { type: ['string', 'null'] } }), /\$\.components\.schemas\.A\.type: expected a string/],
      [minimal({ A: { type: 'array', items: [{ type: 'string' }] } }), /expected one schema for items/],
      [minimal({ A: { $ref: '#/B', default: {} } }), /Schema has no member "\$ref"/],
      [minimal({ A: { maxLength: 1.5 } }), /maxLength: expected a int64/],
      [minimal({ A: { constructor: 'x' } }), /Schema has no member "constructor"/],
      [minimal({ A: { additionalProperties: 'yes' } }), /not a valid AdditionalPropertiesItem/],
      [{ openapi: '3.0.0', paths: { relative: {} } }, /Paths has no member "relative"/],
      [{ openapi: '3.0.0', paths: { '/p': { get: { responses: { '2xx': { description: 'd' } } } } } }, /Responses has no member "2xx"/],
      [{ openapi: '3.0.0', _ref: 'x' }, /Document has no member "_ref"/],
    ];
    for (const [doc, message] of refused) assert.throws(() => encodeOpenApiV3(doc), message);
  });
});
