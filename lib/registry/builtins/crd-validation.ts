// apiextensions.k8s.io/v1 CustomResourceDefinition: the defaulting and the
// validation of kube's apiextensions-apiserver (SetDefaults_*,
// ValidateCustomResourceDefinition[Update]), with its field paths and words.
// The schema of each version goes through lib/crdschema's checkCrdSchema.
import { isPlainObject, type KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { hasOwn } from '../../api/own.js';
import { validateWebhookUrl } from '../../api/webhookurl.js';
import { schemaCausesOf } from './crd-schemacheck.js';
import { at, list, str, sameJson } from '../fields.js';
import { isDNS1035Label, isDNS1123Subdomain } from '../names.js';

const SCOPES = ['Cluster', 'Namespaced'];
const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];
const STRATEGIES = ['None', 'Webhook'];
const MAX_SELECTABLE_FIELDS = 8;

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (isPlainObject(v) ? v : {});

/** The version marked storage (the first, when a client marked several: validation refuses those). */
export function storageVersionOf(crd: unknown): string | undefined {
  const v = list(crd, 'spec', 'versions').find((x) => at(x, 'storage') === true);
  return v === undefined ? undefined : str(v, 'name');
}

/**
 * SetDefaults_CustomResourceDefinition (v1) and the strategy's storedVersions
 * rule: singular and listKind from kind, conversion None, and the storage
 * version added to status.storedVersions (create starts from an empty status).
 */
export function defaultCrd(crd: KObject): void {
  const spec = crd['spec'];
  if (!isPlainObject(spec)) return;
  const names = spec['names'];
  if (isPlainObject(names) && typeof names['kind'] === 'string' && names['kind'] !== '') {
    if (typeof names['singular'] !== 'string' || names['singular'] === '') names['singular'] = names['kind'].toLowerCase();
    if (typeof names['listKind'] !== 'string' || names['listKind'] === '') names['listKind'] = `${names['kind']}List`;
  }
  if (spec['conversion'] === undefined || spec['conversion'] === null) spec['conversion'] = { strategy: 'None' };
  const conv = spec['conversion'];
  if (isPlainObject(conv) && isPlainObject(conv['webhook']) && isPlainObject(at(conv, 'webhook', 'clientConfig', 'service'))) {
    const svc = at(conv, 'webhook', 'clientConfig', 'service') as Json;
    if (svc['port'] === undefined) svc['port'] = 443;
  }
  const storage = storageVersionOf(crd);
  if (storage === undefined) return;
  const status = isPlainObject(crd['status']) ? crd['status'] : (crd['status'] = {});
  const stored = Array.isArray(status['storedVersions']) ? status['storedVersions'] : (status['storedVersions'] = []);
  if (!stored.includes(storage)) stored.push(storage);
}

function label1035(field: string, value: unknown, mixedCase = false): StatusCause[] {
  if (typeof value !== 'string' || value === '') return [];
  const errs = isDNS1035Label(mixedCase ? value.toLowerCase() : value);
  if (errs.length === 0) return [];
  return [cause.invalid(field, value, mixedCase ? `may have mixed case, but should otherwise match: ${errs.join(',')}` : errs.join(','))];
}

/** ValidateCustomResourceDefinitionNames (spec.names and status.acceptedNames). */
export function validateNames(names: unknown, path: string): StatusCause[] {
  const n = obj(names);
  const causes = [
    ...label1035(`${path}.plural`, n['plural']),
    ...label1035(`${path}.singular`, n['singular']),
    ...label1035(`${path}.kind`, n['kind'], true),
    ...label1035(`${path}.listKind`, n['listKind'], true),
  ];
  list(n, 'shortNames').forEach((s, i) =>
    causes.push(...(typeof s === 'string' ? label1035(`${path}.shortNames[${i}]`, s) : [cause.invalid(`${path}.shortNames[${i}]`, s, 'must be a string')])),
  );
  if (typeof n['kind'] === 'string' && n['kind'] !== '' && n['kind'] === n['listKind']) {
    causes.push(cause.invalid(`${path}.listKind`, n['listKind'], 'kind and listKind may not be the same'));
  }
  list(n, 'categories').forEach((c, i) =>
    causes.push(...(typeof c === 'string' ? label1035(`${path}.categories[${i}]`, c) : [cause.invalid(`${path}.categories[${i}]`, c, 'must be a string')])),
  );
  return causes;
}

function simpleJsonPath(field: string, s: string): StatusCause[] {
  if (s === '') return [cause.invalid(field, s, 'must not be empty')];
  if (!s.startsWith('.')) return [cause.invalid(field, s, 'must be a simple json path starting with .')];
  return [];
}

function validateColumn(col: unknown, path: string): StatusCause[] {
  const c = obj(col);
  const causes: StatusCause[] = [];
  if (str(c, 'name') === '') causes.push(cause.required(`${path}.name`));
  const type = c['type'];
  if (typeof type !== 'string' || type === '') causes.push(cause.required(`${path}.type`, `must be one of ${COLUMN_TYPES.join(',')}`));
  else if (!COLUMN_TYPES.includes(type)) causes.push(cause.invalid(`${path}.type`, type, `must be one of ${COLUMN_TYPES.join(',')}`));
  const format = c['format'];
  if (typeof format === 'string' && format !== '' && !COLUMN_FORMATS.includes(format))
    causes.push(cause.invalid(`${path}.format`, format, `must be one of ${COLUMN_FORMATS.join(',')}`));
  const jp = c['jsonPath'];
  if (typeof jp !== 'string' || jp === '') causes.push(cause.required(`${path}.jsonPath`));
  else causes.push(...simpleJsonPath(`${path}.jsonPath`, jp));
  return causes;
}

function validateScale(scale: unknown, path: string): StatusCause[] {
  if (scale === undefined || scale === null) return [];
  const s = obj(scale);
  const causes: StatusCause[] = [];
  for (const [f, under] of [
    ['specReplicasPath', '.spec.'],
    ['statusReplicasPath', '.status.'],
  ] as const) {
    const v = str(s, f);
    if (v === '') {
      causes.push(cause.required(`${path}.${f}`));
      continue;
    }
    const bad = simpleJsonPath(`${path}.${f}`, v);
    if (bad.length) causes.push(...bad);
    else if (!v.startsWith(under)) causes.push(cause.invalid(`${path}.${f}`, v, `should be a json path under ${under.slice(0, -1)}`));
  }
  const sel = str(s, 'labelSelectorPath');
  if (sel !== '') {
    const bad = simpleJsonPath(`${path}.labelSelectorPath`, sel);
    if (bad.length) causes.push(...bad);
    else if (!sel.startsWith('.status.') && !sel.startsWith('.spec.'))
      causes.push(cause.invalid(`${path}.labelSelectorPath`, sel, 'should be a json path under either .spec or .status'));
  }
  return causes;
}

function validateSelectableFields(fields: unknown, path: string): StatusCause[] {
  if (fields === undefined || fields === null) return [];
  if (!Array.isArray(fields)) return [cause.invalid(path, fields, 'must be a list')];
  const causes: StatusCause[] = [];
  if (fields.length > MAX_SELECTABLE_FIELDS)
    causes.push({ reason: 'FieldValueTooMany', field: path, message: `Too many: ${fields.length}: must have at most ${MAX_SELECTABLE_FIELDS} items` });
  const seen = new Set<string>();
  fields.forEach((f, i) => {
    const jp = str(f, 'jsonPath');
    const field = `${path}[${i}].jsonPath`;
    if (jp === '') {
      causes.push(cause.required(field));
      return;
    }
    const bad = simpleJsonPath(field, jp);
    if (bad.length) {
      causes.push(...bad);
      return;
    }
    if (jp === '.metadata.name' || jp === '.metadata.namespace')
      causes.push(cause.invalid(field, jp, 'metadata.name and metadata.namespace are always selectable and may not be set as selectable fields'));
    if (seen.has(jp)) causes.push(cause.duplicate(field, jp));
    seen.add(jp);
  });
  return causes;
}

/** `schemaCauses` undefined: the spec is the stored one, whose schemas are not checked again. */
function validateVersion(v: unknown, i: number, schemaCauses: StatusCause[] | undefined): StatusCause[] {
  const path = `spec.versions[${i}]`;
  const causes: StatusCause[] = [];
  const name = at(v, 'name');
  if (typeof name !== 'string' || name === '') causes.push(cause.required(`${path}.name`));
  else {
    const errs = isDNS1035Label(name);
    if (errs.length) causes.push(cause.invalid(`${path}.name`, name, errs.join(',')));
  }
  const schema = at(v, 'schema', 'openAPIV3Schema');
  if (schema === undefined || schema === null) causes.push(cause.required(`${path}.schema.openAPIV3Schema`, 'schemas are required'));
  else if (schemaCauses !== undefined) {
    const sub = obj(at(v, 'subresources'));
    if (hasOwn(sub, 'status') && sub['status'] !== null && isPlainObject(schema) && schema['type'] !== undefined && schema['type'] !== 'object') {
      causes.push(
        cause.invalid(
          `${path}.schema.openAPIV3Schema.type`,
          schema['type'],
          'only "object" is allowed as the type at the root of the schema if the status subresource is enabled',
        ),
      );
    }
    causes.push(...schemaCauses);
  }
  causes.push(...validateScale(at(v, 'subresources', 'scale'), `${path}.subresources.scale`));
  list(v, 'additionalPrinterColumns').forEach((c, j) => causes.push(...validateColumn(c, `${path}.additionalPrinterColumns[${j}]`)));
  causes.push(...validateSelectableFields(at(v, 'selectableFields'), `${path}.selectableFields`));
  return causes;
}

function validateConversion(conv: unknown): StatusCause[] {
  if (conv === undefined || conv === null) return [];
  const c = obj(conv);
  const strategy = str(c, 'strategy');
  if (strategy === '') return [cause.required('spec.conversion.strategy')];
  if (!STRATEGIES.includes(strategy)) return [cause.notSupported('spec.conversion.strategy', strategy, STRATEGIES)];
  const webhook = c['webhook'];
  if (strategy !== 'Webhook') {
    return webhook === undefined || webhook === null
      ? []
      : [cause.forbidden('spec.conversion.webhook', 'should not be set when strategy is not set to Webhook')];
  }
  if (!isPlainObject(webhook)) return [cause.required('spec.conversion.webhook', 'required when strategy is set to Webhook')];
  const causes: StatusCause[] = [];
  const cc = obj(webhook['clientConfig']);
  const hasUrl = typeof cc['url'] === 'string' && cc['url'] !== '';
  const hasSvc = isPlainObject(cc['service']);
  if (hasUrl === hasSvc) causes.push(cause.required('spec.conversion.webhook.clientConfig', 'exactly one of url or service is required'));
  if (hasSvc) {
    if (str(cc, 'service', 'name') === '') causes.push(cause.required('spec.conversion.webhook.clientConfig.service.name', 'service name is required'));
    if (str(cc, 'service', 'namespace') === '')
      causes.push(cause.required('spec.conversion.webhook.clientConfig.service.namespace', 'service namespace is required'));
  }
  if (hasUrl) causes.push(...validateWebhookUrl('spec.conversion.webhook.clientConfig.url', String(cc['url'])));
  const crv = list(webhook, 'conversionReviewVersions');
  if (crv.length === 0) causes.push(cause.required('spec.conversion.webhook.conversionReviewVersions', 'must include at least one of v1, v1beta1'));
  else if (!crv.some((x) => x === 'v1' || x === 'v1beta1'))
    causes.push(cause.invalid('spec.conversion.webhook.conversionReviewVersions', crv, 'must include at least one of v1, v1beta1'));
  return causes;
}

/** ValidateCustomResourceDefinitionStoredVersions. */
function validateStoredVersions(crd: KObject): StatusCause[] {
  const stored = list(crd, 'status', 'storedVersions');
  if (stored.length === 0) return [cause.invalid('status.storedVersions', stored, 'must have at least one stored version')];
  const causes: StatusCause[] = [];
  const remaining = new Map(stored.map((v, i) => [v, i]));
  for (const v of list(crd, 'spec', 'versions')) {
    const name = str(v, 'name');
    if (at(v, 'storage') === true && !remaining.has(name)) causes.push(cause.invalid('status.storedVersions', v, `must have the storage version ${name}`));
    remaining.delete(name);
  }
  for (const [v, i] of remaining) causes.push(cause.invalid(`status.storedVersions[${i}]`, v, 'must appear in spec.versions'));
  return causes;
}

export { nonStructuralCauses } from './crd-schemacheck.js';

const byCodeUnits = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The order kube's queue meets CRDs in, older first (creation time, then name): of two
 * claiming one name, the earlier gets it. Compared by code units, as Go compares strings
 * (localeCompare, ICU's collation, cost most of a pass's sort with hundreds of CRDs).
 */
export function olderFirst(a: KObject, b: KObject): number {
  return byCodeUnits(a.metadata.creationTimestamp ?? '', b.metadata.creationTimestamp ?? '') || byCodeUnits(a.metadata.name ?? '', b.metadata.name ?? '');
}

export function isEstablished(crd: unknown): boolean {
  return list(crd, 'status', 'conditions').some((c) => str(c, 'type') === 'Established' && str(c, 'status') === 'True');
}

const APPROVAL = 'api-approved.kubernetes.io';
const APPROVAL_LINK = 'see https://github.com/kubernetes/enhancements/pull/1111';

/** kube's validateAPIApproval: groups under k8s.io and kubernetes.io need the approval annotation. */
function validateApproval(crd: KObject, old: KObject | undefined): StatusCause[] {
  const group = str(crd, 'spec', 'group');
  const isProtected = (g: string) => g === 'k8s.io' || g === 'kubernetes.io' || g.endsWith('.k8s.io') || g.endsWith('.kubernetes.io');
  if (!isProtected(group)) return [];
  const state = (o: KObject | undefined) => {
    const v = o?.metadata.annotations?.[APPROVAL];
    if (v === undefined) return 'missing';
    if (v.startsWith('unapproved')) return 'unapproved';
    try {
      new URL(v);
      return 'approved';
    } catch {
      return 'invalid';
    }
  };
  const now = state(crd);
  // An update keeps whatever state the stored object had (kube lets existing objects continue).
  if (old && state(old) === now) return [];
  const field = `metadata.annotations[${APPROVAL}]`;
  if (now === 'missing') return [cause.required(field, `protected groups must have approval annotation "${APPROVAL}", ${APPROVAL_LINK}`)];
  if (now === 'invalid')
    return [
      cause.invalid(
        field,
        crd.metadata.annotations?.[APPROVAL],
        `protected groups must have approval annotation "${APPROVAL}" with either a URL or a reason starting with "unapproved", ${APPROVAL_LINK}`,
      ),
    ];
  return [];
}

/** ValidateCustomResourceDefinition, and on update the immutable fields of ValidateCustomResourceDefinitionSpecUpdate. */
export function validateCrd(crd: KObject, old: KObject | undefined): StatusCause[] {
  const spec = obj(crd['spec']);
  const causes: StatusCause[] = validateApproval(crd, old);
  const group = spec['group'];
  if (typeof group !== 'string' || group === '') causes.push(cause.required('spec.group'));
  else {
    const errs = isDNS1123Subdomain(group);
    if (errs.length) causes.push(cause.invalid('spec.group', group, errs.join(',')));
    else if (group.split('.').length < 2) causes.push(cause.invalid('spec.group', group, 'should be a domain with at least one dot'));
  }
  const scope = str(spec, 'scope');
  if (scope === '') causes.push(cause.required('spec.scope'));
  else if (!SCOPES.includes(scope)) causes.push(cause.notSupported('spec.scope', scope, SCOPES));
  const versions = list(spec, 'versions');
  if (!Array.isArray(spec['versions'])) causes.push(cause.required('spec.versions', 'must have exactly one version marked as storage version'));
  // kube's relaxations for stored CRDs: a non-structural schema or an unpruned default may stay, an unchanged schema keeps its expensive rules.
  // A write that leaves the spec as stored (status, metadata, the controllers' condition updates) checks no
  // schema again: the stored one passed, or was kept by these relaxations, and checking every version's
  // patterns and CEL rules per status write made each CRD change cost a full compile per CRD written.
  // The schema checks are the costly part: a write through the core backend had the check worker run them off the event loop.
  const specUnchanged = old !== undefined && sameJson(crd['spec'], old['spec']);
  const schemaCauses = specUnchanged ? undefined : schemaCausesOf(crd, old);
  versions.forEach((v, i) => causes.push(...validateVersion(v, i, schemaCauses && (schemaCauses[i] ?? []))));
  const names = versions.map((v) => str(v, 'name'));
  if (new Set(names).size !== names.length) causes.push(cause.invalid('spec.versions', versions, 'must contain unique version names'));
  if (versions.length > 0 && versions.filter((v) => at(v, 'storage') === true).length !== 1) {
    causes.push(cause.invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  }
  if (spec['preserveUnknownFields'] === true) {
    causes.push(cause.invalid('spec.preserveUnknownFields', true, 'must be false in order to use defaults in the schema'));
  }
  for (const f of ['plural', 'singular', 'kind', 'listKind'] as const) {
    if (str(spec, 'names', f) === '') causes.push(cause.required(`spec.names.${f}`));
  }
  causes.push(...validateNames(spec['names'], 'spec.names'));
  causes.push(...validateConversion(spec['conversion']));
  causes.push(...validateNames(at(crd, 'status', 'acceptedNames'), 'status.acceptedNames'));
  if (causes.length === 0 || versions.some((v) => at(v, 'storage') === true)) causes.push(...validateStoredVersions(crd));
  if (old) {
    const oldSpec = obj(old['spec']);
    const immutable: Array<[string, unknown, unknown]> = [
      ['spec.group', spec['group'], oldSpec['group']],
      ['spec.names.plural', at(spec, 'names', 'plural'), at(oldSpec, 'names', 'plural')],
    ];
    if (isEstablished(old)) {
      immutable.unshift(['spec.scope', spec['scope'], oldSpec['scope']]);
      immutable.splice(2, 0, ['spec.names.kind', at(spec, 'names', 'kind'), at(oldSpec, 'names', 'kind')]);
    }
    for (const [field, now, before] of immutable) if (!sameJson(now, before)) causes.push(cause.invalid(field, now, 'field is immutable'));
  }
  return causes;
}
