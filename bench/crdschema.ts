// Custom-resource schema validation: lib/crdschema's own validator (a walk
// over checks compiled once per CRD version) against ajv (code generated per
// schema) with the translation of its errors into kube's paths and messages
// that it would need. Same schema, same objects, same process, median of 9
// interleaved rounds. `node --import tsx bench/crdschema.ts`. The figures and the
// decision are in lib/crdschema/README.md.
import { performance } from 'node:perf_hooks';
import { Ajv, type ErrorObject } from 'ajv';
import { RE2JS } from '@bufbuild/re2';
import { compileCrdSchema } from '../lib/crdschema/index.js';
import { formatCheck } from '../lib/crdschema/formats.js';
import type { KObject } from '../lib/api/meta.js';
import { CelEnvironment, CelScalar, fromJson, mapType } from '../lib/cel/index.js';

const ROUNDS = 9;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const fmt = (ns: number) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1000 ? `${(ns / 1000).toFixed(2)} µs` : `${ns.toFixed(0)} ns`);
const row = (what: string, value: string) => console.log(`  ${what.padEnd(58)} ${value}`);

/** ns per call of a and of b, rounds interleaved (a, b, a, b, …) so that a busy machine slows both alike; medians. */
function pair(n: number, a: () => unknown, b: () => unknown): [number, number] {
  const ta: number[] = [];
  const tb: number[] = [];
  let sink: unknown;
  for (let r = 0; r < ROUNDS; r++) {
    for (const [fn, times] of [
      [a, ta],
      [b, tb],
    ] as const) {
      const t0 = performance.now();
      for (let i = 0; i < n; i++) sink = fn();
      times.push(((performance.now() - t0) * 1e6) / n);
    }
  }
  if (sink === Symbol.for('never')) console.log(sink);
  return [median(ta), median(tb)];
}

// A schema the size of a typical operator's CRD version: nested objects, a
// map list, a string map, enums, patterns, bounds, formats, int-or-string.
const SCHEMA = {
  type: 'object',
  properties: {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: {
      type: 'object',
      required: ['secretName', 'issuerRef'],
      properties: {
        secretName: { type: 'string', maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$' },
        commonName: { type: 'string', maxLength: 64 },
        dnsNames: { type: 'array', maxItems: 100, items: { type: 'string', format: 'hostname' } },
        ipAddresses: { type: 'array', items: { type: 'string', format: 'ipv4' } },
        duration: { type: 'string', format: 'duration' },
        replicas: { type: 'integer', minimum: 0, maximum: 10 },
        port: { 'x-kubernetes-int-or-string': true },
        privateKey: {
          type: 'object',
          properties: {
            algorithm: { type: 'string', enum: ['RSA', 'ECDSA', 'Ed25519'] },
            size: { type: 'integer', multipleOf: 256, minimum: 256, maximum: 8192 },
            rotationPolicy: { type: 'string', enum: ['Never', 'Always'] },
          },
        },
        issuerRef: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, kind: { type: 'string' }, group: { type: 'string' } } },
        usages: { type: 'array', items: { type: 'string', enum: ['server auth', 'client auth', 'digital signature', 'key encipherment'] } },
        labels: { type: 'object', additionalProperties: { type: 'string', maxLength: 63 } },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            required: ['name'],
            properties: { name: { type: 'string' }, port: { type: 'integer', minimum: 1, maximum: 65535 }, protocol: { type: 'string', enum: ['TCP', 'UDP'] } },
          },
        },
        note: { type: 'string', nullable: true },
      },
    },
    status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  },
};

const VALID = {
  apiVersion: 'cert.example.com/v1',
  kind: 'Certificate',
  metadata: { name: 'a', namespace: 'default' },
  spec: {
    secretName: 'web-tls',
    commonName: 'web',
    dnsNames: ['web.example.com', 'www.example.com', 'api.example.com'],
    ipAddresses: ['10.0.0.1'],
    duration: '2160h',
    replicas: 3,
    port: 'https',
    privateKey: { algorithm: 'ECDSA', size: 256, rotationPolicy: 'Always' },
    issuerRef: { name: 'ca', kind: 'ClusterIssuer', group: 'cert.example.com' },
    usages: ['server auth', 'client auth'],
    labels: { team: 'web', tier: 'frontend' },
    ports: [
      { name: 'https', port: 443, protocol: 'TCP' },
      { name: 'http', port: 80, protocol: 'TCP' },
    ],
    note: null,
  },
};
const INVALID = structuredClone(VALID) as unknown as { spec: Record<string, unknown> };
INVALID.spec.replicas = 11;
INVALID.spec.privateKey = { algorithm: 'DSA', size: 300 };
INVALID.spec.dnsNames = ['-bad-'];

// ajv's input: kube's extensions rewritten into JSON Schema it knows.
function forAjv(s: unknown): unknown {
  if (Array.isArray(s)) return s.map(forAjv);
  if (s === null || typeof s !== 'object') return s;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(s)) {
    if (k.startsWith('x-kubernetes-')) continue;
    out[k] = k === 'properties' ? Object.fromEntries(Object.entries(v as object).map(([p, x]) => [p, forAjv(x)])) : forAjv(v);
  }
  if ((s as Record<string, unknown>)['x-kubernetes-int-or-string']) out.type = ['integer', 'string'];
  return out;
}

/** ajv errors as kube's causes: what using ajv would add to every failing request. */
function kubeCauses(errors: readonly ErrorObject[]): Array<{ field: string; message: string }> {
  return errors.map((e) => {
    const name = e.instancePath
      .split('/')
      .slice(1)
      .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p}`))
      .join('')
      .replace(/^\./, '');
    const at = `${name} in body`;
    const p = e.params as Record<string, unknown>;
    const value = JSON.stringify(e.data);
    switch (e.keyword) {
      case 'maximum':
        return { field: name, message: `Invalid value: ${value}: ${at} should be less than or equal to ${p.limit}` };
      case 'minimum':
        return { field: name, message: `Invalid value: ${value}: ${at} should be greater than or equal to ${p.limit}` };
      case 'multipleOf':
        return { field: name, message: `Invalid value: ${value}: ${at} should be a multiple of ${p.multipleOf}` };
      case 'enum':
        return {
          field: name,
          message: `Unsupported value: ${value}: supported values: ${(p.allowedValues as string[]).map((x) => JSON.stringify(x)).join(', ')}`,
        };
      case 'format':
        return { field: name, message: `Invalid value: ${value}: ${at} must be of type ${p.format}: ${value}` };
      case 'required':
        return { field: `${name ? `${name}.` : ''}${p.missingProperty}`, message: 'Required value' };
      case 'type':
        return { field: name, message: `Invalid value: "${typeof e.data}": ${at} must be of type ${p.type}: "${typeof e.data}"` };
      default:
        return { field: name, message: `Invalid value: ${value}: ${e.message}` };
    }
  });
}

function newAjv() {
  const formats: Record<string, (s: string) => boolean> = {};
  for (const f of ['hostname', 'ipv4', 'duration']) formats[f] = formatCheck(f)!;
  // kube's patterns are Go RE2: ajv is given the same engine our validator uses, so both answer alike (and in linear time).
  const regExp = Object.assign((pattern: string) => RE2JS.compile(pattern), { code: 'RE2JS.compile' });
  return new Ajv({ allErrors: true, strict: false, formats, code: { regExp } });
}

const ajvSchema = forAjv(SCHEMA);
const REF = { group: 'cert.example.com', version: 'v1', kind: 'Certificate', listKind: 'CertificateList', plural: 'certificates' };
const own = compileCrdSchema(SCHEMA, REF);
const ajvValidate = newAjv().compile(ajvSchema as object);

// Both agree on the problems before anything is timed.
const ownCauses = own.validate(INVALID as unknown as KObject, undefined);
ajvValidate(INVALID);
const ajvCauses = kubeCauses(ajvValidate.errors ?? []);
console.log('CR schema validation: own validator vs ajv (+ translation to kube causes)');
row('causes for the invalid object (own / ajv)', `${ownCauses.length} / ${ajvCauses.length}`);
if (own.validate(VALID as unknown as KObject, undefined).length !== 0 || !ajvValidate(VALID)) throw new Error('the valid object must pass both');

const [validOwn, validAjv] = pair(
  20_000,
  () => own.validate(VALID as unknown as KObject, undefined),
  () => ajvValidate(VALID),
);
row('validate a valid object: own', fmt(validOwn));
row('validate a valid object: ajv', `${fmt(validAjv)}  (${(validAjv / validOwn).toFixed(2)}x own)`);

const [badOwn, badAjv] = pair(
  20_000,
  () => own.validate(INVALID as unknown as KObject, undefined),
  () => {
    ajvValidate(INVALID);
    return kubeCauses(ajvValidate.errors ?? []);
  },
);
row('validate an invalid object (3 problems): own', fmt(badOwn));
row('validate an invalid object (3 problems): ajv + translation', `${fmt(badAjv)}  (${(badAjv / badOwn).toFixed(2)}x own)`);

const [compileOwn, compileAjv] = pair(
  20,
  () => compileCrdSchema(SCHEMA, REF),
  () => newAjv().compile(ajvSchema as object),
);
row('compile one CRD version: own', fmt(compileOwn));
row('compile one CRD version: ajv', `${fmt(compileAjv)}  (${(compileAjv / compileOwn).toFixed(1)}x own)`);

// A rule in CEL's optional syntax (lib/cel/optionalsyntax.ts: the `?` blanked,
// parsed, the marked nodes rewritten) beside the same rule with has(): compile
// (a new expression each time, so the environment's cache is not measured) and
// evaluate on an object that has the field and one that does not.
const celBench = new CelEnvironment('bench', { self: mapType(CelScalar.STRING, CelScalar.DYN) });
let fresh = 0;
const [compileOpt, compileHas] = pair(
  500,
  () => celBench.compile(`self.?replicas.orValue(1) <= ${fresh++}`),
  () => celBench.compile(`!has(self.replicas) || self.replicas <= ${fresh++}`),
);
row('compile a rule: optional syntax', fmt(compileOpt));
row('compile a rule: has()', `${fmt(compileHas)}  (optional ${(compileOpt / compileHas).toFixed(2)}x)`);
const optRule = celBench.compile('self.?replicas.orValue(1) <= 5');
const hasRule = celBench.compile('!has(self.replicas) || self.replicas <= 5');
for (const [what, self] of [
  ['with the field', fromJson({ replicas: 3 })],
  ['without it', fromJson({})],
] as const) {
  const [evalOpt, evalHas] = pair(
    20_000,
    () => optRule.evaluate({ self }),
    () => hasRule.evaluate({ self }),
  );
  row(`evaluate a rule ${what}: optional syntax`, fmt(evalOpt));
  row(`evaluate a rule ${what}: has()`, `${fmt(evalHas)}  (optional ${(evalOpt / evalHas).toFixed(2)}x)`);
}
