// The registry entries of one CustomResourceDefinition: one ResourceType per
// served version, with the names the CRD accepted, its scope, subresources,
// printer columns, selectable fields, and the compiled schema of lib/crdschema
// (structure, defaults, validation, published OpenAPI). Built once per CRD
// generation by the registry sync, never per request.
import type { KObject } from '../api/meta.js';
import { setOwn } from '../api/own.js';
import { compileCrdSchema, type CrdVersionRef, type CrdVersionSchema } from '../crdschema/index.js';
import { at, bool, list, str, strings } from '../registry/fields.js';
import type { StructNode } from '../schema/model.js';
import { ALL_VERBS, type ConversionWebhookConfig, type ResourceType, type ScalePaths, type Subresource } from '../registry/types.js';
import { testPatternsOffLoop } from '../registry/builtins/crd-offloop.js';
import { crdColumns } from './columns.js';
import { findFirst } from './jsonpath.js';
import { compareVersions } from '../registry/priority.js';

const SUBRESOURCE_VERBS = ['get', 'patch', 'update'] as const;

/** A selectable field's value as a field selector compares it (strings as they are, numbers and booleans printed). */
function selectorValue(path: string): (obj: KObject) => string {
  return (obj) => {
    const v = findFirst(obj, path);
    return typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '';
  };
}

function scalePaths(v: unknown): ScalePaths | undefined {
  const s = at(v, 'subresources', 'scale');
  if (s === undefined || s === null) return undefined;
  const sel = str(s, 'labelSelectorPath');
  return { specReplicasPath: str(s, 'specReplicasPath'), statusReplicasPath: str(s, 'statusReplicasPath'), ...(sel ? { labelSelectorPath: sel } : {}) };
}

/** spec.conversion.webhook, when the strategy is Webhook. */
function webhookOf(crd: KObject): ConversionWebhookConfig | undefined {
  if (str(crd, 'spec', 'conversion', 'strategy') !== 'Webhook') return undefined;
  const cc = at(crd, 'spec', 'conversion', 'webhook', 'clientConfig');
  const url = str(cc, 'url');
  const svc = at(cc, 'service');
  const port = at(svc, 'port');
  const ca = str(cc, 'caBundle');
  return Object.freeze({
    ...(url ? { url } : {}),
    ...(svc !== undefined && svc !== null
      ? {
          service: Object.freeze({
            namespace: str(svc, 'namespace'),
            name: str(svc, 'name'),
            path: str(svc, 'path') || '/',
            port: typeof port === 'number' ? port : 443,
          }),
        }
      : {}),
    ...(ca ? { caPem: Buffer.from(ca, 'base64').toString('utf8') } : {}),
    reviewVersions: Object.freeze(strings(at(crd, 'spec', 'conversion', 'webhook'), 'conversionReviewVersions')),
  });
}

/** The names a CRD serves under: its accepted names once the naming controller set them, else its spec's. */
function namesOf(crd: KObject): Record<string, unknown> {
  const accepted = at(crd, 'status', 'acceptedNames');
  return str(accepted, 'plural') !== '' ? (accepted as Record<string, unknown>) : ((at(crd, 'spec', 'names') ?? {}) as Record<string, unknown>);
}

/** Whether a schema declares a `default` anywhere (then objects read from storage are defaulted too). */
function hasDefaults(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.some(hasDefaults);
  if (schema === null || typeof schema !== 'object') return false;
  return Object.hasOwn(schema, 'default') || Object.values(schema).some(hasDefaults);
}

/**
 * kube's defaultDeprecationWarning: `<group>/<version> <Kind> is deprecated`, then `; use <group>/<v> <Kind>`
 * naming the most preferred served, undeprecated version that kube ranks above the deprecated one.
 */
function defaultDeprecationWarning(crd: KObject, deprecated: string, group: string, kind: string): string {
  const msg = `${group}/${deprecated} ${kind} is deprecated`;
  const newer = list(crd, 'spec', 'versions')
    .filter((v) => bool(v, 'served') && !bool(v, 'deprecated') && compareVersions(str(v, 'name'), deprecated) < 0)
    .map((v) => str(v, 'name'))
    .sort(compareVersions);
  return newer.length === 0 ? msg : `${msg}; use ${group}/${newer[0]} ${kind}`;
}

/** Compiles one version's schema; the registry sync passes one that reuses what an earlier generation-equal build compiled. */
export type SchemaCompiler = (schema: unknown, ref: CrdVersionRef) => CrdVersionSchema;

export function crdResourceTypes(crd: KObject, compile: SchemaCompiler = compileCrdSchema): ResourceType[] {
  const group = str(crd, 'spec', 'group');
  const names = namesOf(crd);
  const kind = str(names, 'kind');
  const listKind = str(names, 'listKind') || `${kind}List`;
  const plural = str(names, 'plural');
  const namespaced = str(crd, 'spec', 'scope') === 'Namespaced';
  const storage = list(crd, 'spec', 'versions').find((v) => at(v, 'storage') === true);
  const webhook = webhookOf(crd);
  const types: ResourceType[] = [];
  // Every version's schema, unserved ones too: owners' field sets may be in any version of the CRD.
  const compiled = new Map<string, CrdVersionSchema>();
  const versionSchemas = new Map<string, StructNode | undefined>();
  for (const v of list(crd, 'spec', 'versions')) {
    const version = str(v, 'name');
    const schema = compile(at(v, 'schema', 'openAPIV3Schema'), { group, version, kind, listKind, plural });
    compiled.set(version, schema);
    versionSchemas.set(`${group}/${version}`, schema.node);
  }
  for (const v of list(crd, 'spec', 'versions')) {
    if (!bool(v, 'served')) continue;
    const version = str(v, 'name');
    const raw = at(v, 'schema', 'openAPIV3Schema');
    const schema = compiled.get(version)!;
    const ready = schema.ready?.bind(schema);
    const patternTests = schema.patternTests?.bind(schema);
    const typeName = `${plural}.${group}`;
    const subresources: Subresource[] = [];
    const hasStatus = at(v, 'subresources', 'status') !== undefined && at(v, 'subresources', 'status') !== null;
    if (hasStatus) subresources.push({ name: 'status', kind, verbs: SUBRESOURCE_VERBS });
    const scale = scalePaths(v);
    if (scale) subresources.push({ name: 'scale', kind: 'Scale', group: 'autoscaling', version: 'v1', verbs: SUBRESOURCE_VERBS });
    const fieldSelectors: Record<string, (obj: KObject) => string> = {};
    for (const f of list(v, 'selectableFields')) {
      const path = str(f, 'jsonPath');
      if (path.startsWith('.')) setOwn(fieldSelectors, path.slice(1), selectorValue(path));
    }
    types.push({
      group,
      version,
      kind,
      listKind,
      plural,
      singular: str(names, 'singular') || kind.toLowerCase(),
      namespaced,
      shortNames: strings(names, 'shortNames'),
      categories: strings(names, 'categories'),
      verbs: ALL_VERBS,
      // kube's customResourceStrategy: any change outside metadata bumps the generation (status too, unless /status serves it).
      subresources,
      nameRule: 'subdomain',
      createOnUpdate: false,
      generation: hasStatus ? 'spec' : 'all-but-metadata',
      columns: crdColumns(list(v, 'additionalPrinterColumns')),
      fieldSelectors,
      defaults: (obj) => schema.defaults(obj),
      validate: (obj, old) => schema.validate(obj, old),
      // A write waits for the rules' sliced compilation, and has the values that meet a pattern costly
      // to compile tested on the check worker, rather than compiling them on the event loop.
      ...(ready || patternTests
        ? {
            prevalidate: async (obj: KObject, old: KObject | undefined) => {
              if (ready) await ready();
              const tests = patternTests?.(obj, old);
              if (tests?.length) await testPatternsOffLoop(tests, typeName);
            },
          }
        : {}),
      ...(schema.node ? { schema: schema.node } : {}),
      openapi: schema.openapi,
      ...(scale ? { scale } : {}),
      crd: crd.metadata.name ?? '',
      ...(hasDefaults(raw) ? { readDefaults: (obj: KObject) => schema.defaults(obj) } : {}),
      ...(crd.metadata.deletionTimestamp ? { terminating: true } : {}),
      ...(bool(v, 'deprecated')
        ? {
            deprecationWarning:
              typeof at(v, 'deprecationWarning') === 'string' ? str(v, 'deprecationWarning') : defaultDeprecationWarning(crd, version, group, kind),
          }
        : {}),
      // Discovery's storageVersionHash is the storage version's, as kube's CRD discovery computes it.
      ...(storage ? { storageVersion: { group, version: str(storage, 'name'), kind } } : {}),
      ...(webhook ? { conversionWebhook: webhook } : {}),
      versionSchemas,
    });
  }
  return types;
}
