// lib/openapi/v2proto.ts on the Swagger 2.0 shapes our documents do not use
// yet but gnostic's schema has: every oneof choice, lists of types and items,
// extensions on maps of entries, and a member gnostic has no field for.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeOpenApiV2 } from '../../lib/openapi/v2proto.js';
import { decodeGnosticV2 } from './gnostic.js';

const roundTrip = (doc: Record<string, unknown>) => decodeGnosticV2(encodeOpenApiV2(doc));

describe('the gnostic protobuf form of a Swagger 2.0 document', () => {
  it('keeps additionalProperties: false (a oneof member with presence), type lists, item lists, defaults and enums', () => {
    const doc = {
      swagger: '2.0',
      info: { title: 't', version: 'v' },
      paths: {},
      definitions: {
        Closed: { type: 'object', additionalProperties: false, properties: { a: { type: ['string', 'null'], enum: ['x', 'y'], default: 'x' } } },
        Tuple: { type: 'array', items: [{ type: 'string' }, { type: 'integer', format: 'int64', maximum: 10, minLength: 2 }] },
        Open: { type: 'object', additionalProperties: { $ref: '#/definitions/Closed' }, 'x-kubernetes-map-type': 'atomic', default: { k: [1, 'two'] } },
      },
    };
    assert.deepEqual(roundTrip(doc), doc);
  });
  it('chooses every parameter kind, references for parameters and responses, file responses and security schemes', () => {
    const doc = {
      swagger: '2.0',
      info: { title: 't', version: 'v' },
      basePath: '/',
      schemes: ['https'],
      paths: {
        'x-paths-ext': { a: 1 },
        '/p/{id}': {
          parameters: [{ $ref: '#/parameters/shared' }],
          post: {
            parameters: [
              { name: 'id', in: 'path', required: true, type: 'string' },
              { name: 'q', in: 'query', type: 'array', items: { type: 'string' }, collectionFormat: 'multi' },
              { name: 'h', in: 'header', type: 'string' },
              { name: 'f', in: 'formData', type: 'file' },
              { name: 'body', in: 'body', schema: { type: 'object' } },
            ],
            responses: { '200': { description: 'ok', schema: { type: 'file' } }, default: { $ref: '#/responses/err' }, 'x-resp': true },
          },
        },
      },
      parameters: { shared: { name: 'pretty', in: 'query', type: 'boolean' } },
      responses: { err: { description: 'error', headers: { 'Retry-After': { type: 'integer' } } } },
      securityDefinitions: {
        basic: { type: 'basic' },
        key: { type: 'apiKey', name: 'authorization', in: 'header' },
        oauth: { type: 'oauth2', flow: 'accessCode', authorizationUrl: 'https://a', tokenUrl: 'https://t', scopes: { read: 'read it' } },
      },
      security: [{ key: [] }, { oauth: ['read'] }],
      tags: [{ name: 'core', externalDocs: { url: 'https://k8s.io' } }],
      'x-top': { nested: ['list'] },
    };
    assert.deepEqual(roundTrip(doc), doc);
  });
  it('refuses a member gnostic has no field for instead of dropping it', () => {
    assert.throws(
      () => encodeOpenApiV2({ swagger: '2.0', info: { title: 't', version: 'v' }, paths: {}, definitions: { A: { nullable: true } } }),
      /Schema has no member "nullable"/,
    );
  });

  it("refuses a member named as one of Object's own properties, which no message has as a field", () => {
    for (const member of ['constructor', 'toString', 'hasOwnProperty'])
      assert.throws(
        () => encodeOpenApiV2({ swagger: '2.0', info: { title: 't', version: 'v' }, paths: {}, definitions: { A: { [member]: 'x' } } }),
        new RegExp(`Schema has no member "${member}"`),
      );
  });
});
