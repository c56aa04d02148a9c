// Name, label and key validation with apimachinery's rules and messages
// (k8s.io/apimachinery/pkg/util/validation, pkg/api/validation): clients and
// people match on this text, so it is kept word for word.
import { isPlainObject, type KObject } from '../api/meta.js';
import { cause, type StatusCause } from '../api/status.js';
import type { NameRule } from './types.js';
import { str } from './fields.js';

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const CONFIG_KEY_FMT = '[-._a-zA-Z0-9]+';

const DNS1123_LABEL = new RegExp(`^${DNS1123_LABEL_FMT}$`);
const DNS1123_SUBDOMAIN = new RegExp(`^${DNS1123_SUBDOMAIN_FMT}$`);
const DNS1035_LABEL = new RegExp(`^${DNS1035_LABEL_FMT}$`);
const QUALIFIED_NAME = new RegExp(`^${QUALIFIED_NAME_FMT}$`);
const LABEL_VALUE = new RegExp(`^${LABEL_VALUE_FMT}$`);
const CONFIG_KEY = new RegExp(`^${CONFIG_KEY_FMT}$`);

export const DNS1123_LABEL_MAX = 63;
export const DNS1123_SUBDOMAIN_MAX = 253;
export const DNS1035_LABEL_MAX = 63;
export const QUALIFIED_NAME_MAX = 63;
export const LABEL_VALUE_MAX = 63;
export const ANNOTATIONS_MAX_BYTES = 256 * 1024;

const QUALIFIED_NAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** apimachinery's RegexError: the rule, examples, then the regex. */
export function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  // Go writes each example as "'x', " and joins them with " or ": the doubled space is kube's, kept so messages compare equal.
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

export function maxLenError(n: number): string {
  return `must be no more than ${n} characters`;
}

export function isDNS1123Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > DNS1123_LABEL_MAX) errs.push(maxLenError(DNS1123_LABEL_MAX));
  if (DNS1123_LABEL.test(v)) return errs;
  // A valid subdomain that is no label has dots (its length is checked above): kube says so since 1.27.
  if (DNS1123_SUBDOMAIN.test(v)) errs.push('must not contain dots');
  else {
    errs.push(
      regexError(
        "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character",
        DNS1123_LABEL_FMT,
        'my-name',
        '123-abc',
      ),
    );
  }
  return errs;
}

export function isDNS1123Subdomain(v: string): string[] {
  const errs: string[] = [];
  if (v.length > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!DNS1123_SUBDOMAIN.test(v)) {
    errs.push(
      regexError(
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
        DNS1123_SUBDOMAIN_FMT,
        'example.com',
      ),
    );
  }
  return errs;
}

export function isDNS1035Label(v: string): string[] {
  const errs: string[] = [];
  if (v.length > DNS1035_LABEL_MAX) errs.push(maxLenError(DNS1035_LABEL_MAX));
  if (!DNS1035_LABEL.test(v)) {
    errs.push(
      regexError(
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
        DNS1035_LABEL_FMT,
        'my-name',
        'abc-123',
      ),
    );
  }
  return errs;
}

/** path.IsValidPathSegmentName; with prefix (a generateName) only the characters are checked. */
export function isValidPathSegmentName(v: string, prefix = false): string[] {
  const errs: string[] = [];
  if (!prefix && (v === '.' || v === '..')) errs.push(`may not be '${v}'`);
  for (const bad of ['/', '%']) if (v.includes(bad)) errs.push(`may not contain '${bad}'`);
  return errs;
}

/** A label key or annotation key: an optional DNS subdomain prefix and '/', then a name of at most 63 characters. */
export function isQualifiedName(v: string): string[] {
  const errs: string[] = [];
  // indexOf, not split('/'): split made an array in V8's runtime per key (~1.1k instructions a label key of a create).
  const slash = v.indexOf('/');
  let name: string;
  if (slash < 0) {
    name = v;
  } else if (v.indexOf('/', slash + 1) < 0) {
    const prefix = v.slice(0, slash);
    name = v.slice(slash + 1);
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...isDNS1123Subdomain(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > QUALIFIED_NAME_MAX) errs.push(`name part ${maxLenError(QUALIFIED_NAME_MAX)}`);
  if (!QUALIFIED_NAME.test(name)) errs.push(`name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

export function isValidLabelValue(v: string): string[] {
  const errs: string[] = [];
  if (v.length > LABEL_VALUE_MAX) errs.push(maxLenError(LABEL_VALUE_MAX));
  if (!LABEL_VALUE.test(v)) {
    errs.push(
      regexError(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
        LABEL_VALUE_FMT,
        'MyValue',
        'my_value',
        '12345',
      ),
    );
  }
  return errs;
}

/** A key of ConfigMap or Secret data (it becomes a file name when mounted). */
export function isConfigMapKey(v: string): string[] {
  const errs: string[] = [];
  if (v.length > DNS1123_SUBDOMAIN_MAX) errs.push(maxLenError(DNS1123_SUBDOMAIN_MAX));
  if (!CONFIG_KEY.test(v))
    errs.push(regexError("a valid config key must consist of alphanumeric characters, '-', '_' or '.'", CONFIG_KEY_FMT, 'key.name', 'KEY_NAME', 'key-name'));
  if (v === '.') errs.push("must not be '.'");
  else if (v === '..') errs.push("must not be '..'");
  else if (v.startsWith('..')) errs.push("must not start with '..'");
  return errs;
}

/**
 * A generateName gets random characters appended, so a trailing '-' must not
 * fail it: apimachinery's maskTrailingDash, which also drops the character
 * before the dash ("web.-" is checked as "weba", "a_-" as "aa"), as kube does.
 */
export function maskTrailingDash(s: string): string {
  return s.length > 1 && s.endsWith('-') ? `${s.slice(0, -2)}a` : s;
}

/**
 * The check of metadata.name (prefix = false) or metadata.generateName (prefix = true) for a rule.
 * A generateName is checked masked (maskTrailingDash).
 * An APIService's name must equal `<spec.version>.<spec.group>`, hence the object.
 */
export function checkName(rule: NameRule, name: string, prefix: boolean, obj?: KObject): string[] {
  const masked = prefix ? maskTrailingDash(name) : name;
  switch (rule) {
    case 'subdomain':
      return isDNS1123Subdomain(masked);
    case 'label':
      return isDNS1123Label(masked);
    case 'dns1035':
      return isDNS1035Label(masked);
    case 'path-segment':
      return isValidPathSegmentName(name, prefix);
    case 'apiservice': {
      // kube-aggregator checks a generateName as a whole name, not as a prefix.
      const minimal = isValidPathSegmentName(name);
      if (minimal.length) return minimal;
      const required = `${str(obj, 'spec', 'version')}.${str(obj, 'spec', 'group')}`;
      return name === required ? [] : [`must be \`spec.version+"."+spec.group\`: ${JSON.stringify(required)}`];
    }
    case 'crd': {
      const errs = isDNS1123Subdomain(masked);
      return name === `${str(obj, 'spec', 'names', 'plural')}.${str(obj, 'spec', 'group')}` ? errs : [...errs, 'must be spec.names.plural+"."+spec.group'];
    }
  }
}

/** Causes for metadata.name and metadata.generateName, as ValidateObjectMeta reports them. */
export function validateName(rule: NameRule, obj: KObject): StatusCause[] {
  const causes: StatusCause[] = [];
  const { name, generateName } = obj.metadata;
  if (typeof generateName === 'string' && generateName !== '') {
    for (const m of checkName(rule, generateName, true, obj)) causes.push(cause.invalid('metadata.generateName', generateName, m));
  }
  if (typeof name !== 'string' || name === '') {
    causes.push(cause.required('metadata.name', 'name or generateName is required'));
  } else {
    for (const m of checkName(rule, name, false, obj)) causes.push(cause.invalid('metadata.name', name, m));
  }
  return causes;
}

/** metadata.namespace: required (a DNS-1123 label) on namespaced types, forbidden on cluster-scoped ones. */
export function validateNamespaceField(namespaced: boolean, obj: KObject): StatusCause[] {
  const ns = obj.metadata.namespace;
  if (!namespaced) return typeof ns === 'string' && ns !== '' ? [cause.forbidden('metadata.namespace', 'not allowed on this type')] : [];
  if (typeof ns !== 'string' || ns === '') return [cause.required('metadata.namespace')];
  return isDNS1123Label(ns).map((m) => cause.invalid('metadata.namespace', ns, m));
}

/** metadata.labels: qualified-name keys and label values; both reported at the map's path, as kube does. */
export function validateLabels(labels: unknown, field = 'metadata.labels'): StatusCause[] {
  if (labels === undefined || labels === null) return [];
  if (!isPlainObject(labels)) return [cause.typeInvalid(field, labels, 'must be a map of string keys to string values')];
  const causes: StatusCause[] = [];
  for (const [k, v] of Object.entries(labels)) {
    for (const m of isQualifiedName(k)) causes.push(cause.invalid(field, k, m));
    if (typeof v !== 'string') causes.push(cause.typeInvalid(`${field}[${k}]`, v, 'must be a string'));
    else for (const m of isValidLabelValue(v)) causes.push(cause.invalid(field, v, m));
  }
  return causes;
}

/** metadata.annotations: keys are qualified names (case-insensitive), total size at most 256 KiB. */
export function validateAnnotations(annotations: unknown, field = 'metadata.annotations'): StatusCause[] {
  if (annotations === undefined || annotations === null) return [];
  if (!isPlainObject(annotations)) return [cause.typeInvalid(field, annotations, 'must be a map of string keys to string values')];
  const causes: StatusCause[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) {
    for (const m of isQualifiedName(k.toLowerCase())) causes.push(cause.invalid(field, k, m));
    if (typeof v !== 'string') causes.push(cause.typeInvalid(`${field}[${k}]`, v, 'must be a string'));
    else size += Buffer.byteLength(k) + Buffer.byteLength(v);
  }
  if (size > ANNOTATIONS_MAX_BYTES) causes.push(tooLong(field, ANNOTATIONS_MAX_BYTES));
  return causes;
}

/** field.TooLong, which status.ts has no helper for. */
export function tooLong(field: string, max: number): StatusCause {
  return { reason: 'FieldValueTooLong', field, message: `Too long: may not be more than ${max} bytes` };
}
