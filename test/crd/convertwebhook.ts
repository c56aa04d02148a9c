// A real HTTPS conversion webhook for the CRD tests: Gadgets whose v1 has
// `spec.hostPort: "host:port"` and whose v2 has `spec.host` and `spec.port`.
// It records every ConversionReview it receives (and its traceparent); the
// test sets `mode` to make it answer wrongly in one of the ways kube checks.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { TestServer } from '../helpers/server.js';
import { CRD_PATH, waitEstablished } from './fixtures.js';
import type { AddressInfo } from 'node:net';
import { generateCa, generateServingCert, type CertKeyPair } from '../../certs/pki.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export type Mode =
  'ok' | 'wrong-uid' | 'failure' | 'failure-no-message' | 'wrong-count' | 'rename' | 'wrong-version' | 'relabel' | 'bad-label' | 'http-500' | 'not-json';

export interface ConversionWebhook {
  readonly url: string;
  readonly port: number;
  readonly ca: CertKeyPair;
  readonly reviews: Array<{ review: Json; traceparent: string | undefined }>;
  mode: Mode;
  close(): Promise<void>;
}

function convert(o: Json, desired: string): Json {
  const out = structuredClone(o);
  out.apiVersion = desired;
  const spec = out.spec ?? {};
  if (desired.endsWith('/v2') && typeof spec.hostPort === 'string') {
    const [host, port] = spec.hostPort.split(':');
    delete spec.hostPort;
    spec.host = host;
    spec.port = Number(port);
  } else if (desired.endsWith('/v1') && typeof spec.host === 'string') {
    spec.hostPort = `${spec.host}:${spec.port}`;
    delete spec.host;
    delete spec.port;
  }
  // A webhook may not change metadata beyond labels and annotations: this one tries (kube restores it).
  out.metadata = { ...out.metadata, generation: 99 };
  return out;
}

/** `hosts`: names its certificate carries besides localhost/127.0.0.1 (a service's `<name>.<namespace>.svc`). */
export async function startConversionWebhook(hosts: string[] = []): Promise<ConversionWebhook> {
  const ca = generateCa('conversion-webhook-ca');
  const serving = generateServingCert(ca, { hosts });
  const reviews: ConversionWebhook['reviews'] = [];
  const hook = { mode: 'ok' as Mode };
  const server: Server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
      reviews.push({ review, traceparent: req.headers.traceparent as string | undefined });
      const { uid, desiredAPIVersion, objects } = review.request as { uid: string; desiredAPIVersion: string; objects: Json[] };
      let converted = objects.map((o) => convert(o, desiredAPIVersion));
      let result: Json = { status: 'Success' };
      let answerUid = uid;
      switch (hook.mode) {
        case 'wrong-uid':
          answerUid = 'not-the-request';
          break;
        case 'failure':
          result = { status: 'Failure', message: 'cannot convert gadgets today' };
          break;
        case 'failure-no-message':
          result = { status: 'Failure' };
          break;
        case 'wrong-count':
          converted = [...converted, converted[0]!];
          break;
        case 'rename':
          converted = converted.map((o) => ({ ...o, metadata: { ...o.metadata, name: 'renamed' } }));
          break;
        case 'wrong-version':
          converted = converted.map((o) => ({ ...o, apiVersion: 'conv.example.com/v3' }));
          break;
        case 'relabel':
          converted = converted.map((o) => ({ ...o, metadata: { ...o.metadata, labels: { converted: 'yes' } } }));
          break;
        case 'bad-label':
          converted = converted.map((o) => ({ ...o, metadata: { ...o.metadata, labels: { 'bad key!': 'x' } } }));
          break;
        case 'http-500':
          res.writeHead(500).end('boom');
          return;
        case 'not-json':
          res.writeHead(200, { 'content-type': 'application/json' }).end('<html>');
          return;
        default:
          break;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          apiVersion: review.apiVersion,
          kind: 'ConversionReview',
          response: { uid: answerUid, result, convertedObjects: converted },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(hook, {
    url: `https://127.0.0.1:${port}/convert`,
    port,
    ca,
    reviews,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}

/** A CRD's caBundle: the PEM, base64. */
export const caBundle = (pem: string): string => Buffer.from(pem).toString('base64');

/**
 * Installs the Gadgets CRD converted by `hook` (by URL, trusted through its CA), `edit`ed first,
 * and waits until v2 is served.
 */
export async function installGadgets(s: Pick<TestServer, 'admin'>, hook: ConversionWebhook, edit: (crd: Json) => void = () => {}): Promise<void> {
  const crd = gadgetCrd({ url: hook.url, caBundle: caBundle(hook.ca.certPem) });
  edit(crd);
  const r = await s.admin.request('POST', CRD_PATH, crd);
  assert.equal(r.status, 201, r.text);
  await waitEstablished(s, 'gadgets.conv.example.com', '/apis/conv.example.com/v2/namespaces/default/gadgets');
}

/** Gadgets: v1 (hostPort) and v2 (host, port; the storage version), converted by a webhook at `clientConfig`. */
export function gadgetCrd(clientConfig: Json, name = 'gadgets', group = 'conv.example.com'): Json {
  const kind = name === 'gadgets' ? 'Gadget' : `${name[0]!.toUpperCase()}${name.slice(1, -1)}`;
  const status = { type: 'object', properties: { ready: { type: 'boolean' } } };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${name}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { plural: name, singular: kind.toLowerCase(), kind },
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1', 'v1beta1'], clientConfig } },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: false,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { hostPort: { type: 'string' } } }, status } } },
        },
        {
          name: 'v2',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec: { type: 'object', properties: { host: { type: 'string' }, port: { type: 'integer', maximum: 65535 } } }, status },
            },
          },
        },
      ],
    },
  };
}
