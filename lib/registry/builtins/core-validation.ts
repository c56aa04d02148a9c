// The light structural checks kube-apiserver makes on core objects
// (pkg/apis/core/validation): data keys that can become file names, secret
// payloads that decode, pods that name their containers. Secret contents never
// appear in a cause: a rejected value is shown as kube shows it, redacted.
import { isPlainObject, type KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { isConfigMapKey, isDNS1123Label, tooLong } from '../names.js';
import { at, bool, list, record, sameJson, str } from '../fields.js';
import { setOwn } from '../../api/own.js';
import { hasOwn } from '../../api/own.js';
import { validateContainerResources } from './pod-resources.js';

/** core.MaxSecretSize, which also bounds ConfigMaps. */
export const MAX_SECRET_SIZE = 1024 * 1024;
const REDACTED = '<secret contents redacted>';
const BASE64_CHAR = /[A-Za-z0-9+/]/;

/** Where Go's strict StdEncoding decoder fails, or -1 when the string is valid padded base64. */
export function base64Error(s: string): number {
  const body = s.replace(/={1,2}$/, '');
  for (let i = 0; i < body.length; i++) if (!BASE64_CHAR.test(body[i]!)) return i;
  // A truncated final quantum (or padding where none is due) fails at the end of the input.
  return s.length % 4 === 0 ? -1 : s.length;
}

function decodedLength(s: string): number {
  return Math.floor(s.length / 4) * 3 - (s.endsWith('==') ? 2 : s.endsWith('=') ? 1 : 0);
}

function keyCauses(field: string, key: string): StatusCause[] {
  return isConfigMapKey(key).map((m) => cause.invalid(`${field}[${key}]`, key, m));
}

/** keyCauses appended to `causes`: a valid key (every key of an ordinary write) adds no array of its own. */
function addKeyCauses(causes: StatusCause[], field: string, key: string): void {
  const errs = isConfigMapKey(key);
  for (let i = 0; i < errs.length; i++) causes.push(cause.invalid(`${field}[${key}]`, key, errs[i]!));
}

/** A map that must hold base64 strings; returns the decoded size. */
function base64Map(o: KObject, field: string, causes: StatusCause[], redact: boolean): number {
  let size = 0;
  for (const [k, v] of Object.entries(record(o, field))) {
    causes.push(...keyCauses(field, k));
    if (typeof v !== 'string') {
      causes.push(cause.typeInvalid(`${field}[${k}]`, redact ? REDACTED : v, 'must be a base64-encoded string'));
      continue;
    }
    const bad = base64Error(v);
    if (bad >= 0) causes.push(cause.invalid(`${field}[${k}]`, redact ? REDACTED : v, `illegal base64 data at input byte ${bad}`));
    else size += decodedLength(v);
  }
  return size;
}

function notAMap(o: KObject, field: string): StatusCause[] {
  const v = o[field];
  return v === undefined || v === null || isPlainObject(v)
    ? []
    : [cause.typeInvalid(field, field === 'data' || field === 'stringData' ? REDACTED : v, 'must be an object')];
}

function immutableWhenSet(obj: KObject, old: KObject | undefined, fields: readonly string[]): StatusCause[] {
  if (!old || !bool(old, 'immutable')) return [];
  const causes: StatusCause[] = [];
  if (!bool(obj, 'immutable')) causes.push(cause.forbidden('immutable', 'field is immutable when `immutable` is set'));
  for (const f of fields) if (!sameJson(obj[f] ?? {}, old[f] ?? {})) causes.push(cause.forbidden(f, 'field is immutable when `immutable` is set'));
  return causes;
}

// Every ConfigMap write runs this: causes are appended (no array spread per key or check), the
// binaryData walk and the immutability check skipped when there is nothing for them; a ConfigMap of
// three keys 7.8k → 3.6k instructions (docs/decisions/2026-11-29-create-cpu-cuts.md).
export function validateConfigMap(obj: KObject, old: KObject | undefined): StatusCause[] {
  const causes = notAMap(obj, 'data');
  const notBinary = notAMap(obj, 'binaryData');
  if (notBinary.length > 0) causes.push(notBinary[0]!);
  const data = record(obj, 'data');
  const binary = record(obj, 'binaryData');
  const binaryKeys = Object.keys(binary);
  let size = 0;
  for (const k of Object.keys(data)) {
    const v = data[k];
    addKeyCauses(causes, 'data', k);
    if (binaryKeys.length > 0 && hasOwn(binary, k)) causes.push(cause.invalid(`data[${k}]`, k, 'duplicate of key present in binaryData'));
    if (typeof v !== 'string') causes.push(cause.typeInvalid(`data[${k}]`, v, 'must be a string'));
    else size += Buffer.byteLength(v);
  }
  if (binaryKeys.length > 0) {
    for (const k of binaryKeys) if (hasOwn(data, k)) causes.push(cause.invalid(`binaryData[${k}]`, k, 'duplicate of key present in data'));
    size += base64Map(obj, 'binaryData', causes, false);
  }
  if (size > MAX_SECRET_SIZE) causes.push(tooLong('', MAX_SECRET_SIZE));
  if (old) causes.push(...immutableWhenSet(obj, old, ['data', 'binaryData']));
  return causes;
}

/** Keys each well-known secret type must carry. */
function typeCauses(obj: KObject): StatusCause[] {
  const data = record(obj, 'data');
  const has = (k: string) => hasOwn(data, k);
  const required = (k: string) => cause.required(`data[${k}]`);
  switch (str(obj, 'type')) {
    case 'kubernetes.io/service-account-token':
      return obj.metadata.annotations?.['kubernetes.io/service-account.name']
        ? []
        : [cause.required('metadata.annotations[kubernetes.io/service-account.name]')];
    case 'kubernetes.io/dockercfg':
      return has('.dockercfg') ? [] : [required('.dockercfg')];
    case 'kubernetes.io/dockerconfigjson':
      return has('.dockerconfigjson') ? [] : [required('.dockerconfigjson')];
    case 'kubernetes.io/basic-auth':
      return has('username') || has('password') ? [] : [required('username'), required('password')];
    case 'kubernetes.io/ssh-auth':
      return str(data, 'ssh-privatekey') ? [] : [required('ssh-privatekey')];
    case 'kubernetes.io/tls':
      return [...(has('tls.crt') ? [] : [required('tls.crt')]), ...(has('tls.key') ? [] : [required('tls.key')])];
    default:
      return [];
  }
}

export function validateSecret(obj: KObject, old: KObject | undefined): StatusCause[] {
  const causes = [...notAMap(obj, 'data'), ...notAMap(obj, 'stringData')];
  const size = base64Map(obj, 'data', causes, true);
  for (const [k, v] of Object.entries(record(obj, 'stringData'))) {
    causes.push(...keyCauses('stringData', k));
    if (typeof v !== 'string') causes.push(cause.typeInvalid(`stringData[${k}]`, REDACTED, 'must be a string'));
  }
  if (size > MAX_SECRET_SIZE) causes.push(tooLong('data', MAX_SECRET_SIZE));
  causes.push(...typeCauses(obj));
  if (old && str(obj, 'type') !== str(old, 'type')) causes.push(cause.invalid('type', str(obj, 'type'), 'field is immutable'));
  causes.push(...immutableWhenSet(obj, old, ['data']));
  return causes;
}

/** Merges stringData into data, base64-encoded, as the v1 conversion does; stringData is never stored. */
export function defaultSecret(obj: KObject): void {
  if (typeof obj['type'] !== 'string' || obj['type'] === '') obj['type'] = 'Opaque';
  const stringData = obj['stringData'];
  if (!isPlainObject(stringData)) return;
  const data: Record<string, unknown> = isPlainObject(obj['data']) ? { ...obj['data'] } : {};
  for (const [k, v] of Object.entries(stringData)) if (typeof v === 'string') setOwn(data, k, Buffer.from(v).toString('base64'));
  obj['data'] = data;
  delete obj['stringData'];
}

/** A pod names its containers: required, unique DNS-1123 labels, each with an image. */
export function validatePod(obj: KObject): StatusCause[] {
  return validatePodSpec(obj['spec'], 'spec');
}

/** The containers of a pod spec at `path` (`spec`, `spec.template.spec`). */
export function validatePodSpec(spec: unknown, path: string): StatusCause[] {
  const containers = at(spec, 'containers');
  if (!Array.isArray(containers) || containers.length === 0) return [cause.required(`${path}.containers`)];
  const causes: StatusCause[] = [];
  const seen = new Set<string>();
  for (const [i, c] of list(spec, 'containers').entries()) {
    const field = `${path}.containers[${i}]`;
    const name = str(c, 'name');
    if (name === '') causes.push(cause.required(`${field}.name`));
    else for (const m of isDNS1123Label(name)) causes.push(cause.invalid(`${field}.name`, name, m));
    if (name !== '' && seen.has(name)) causes.push(cause.duplicate(`${field}.name`, name));
    seen.add(name);
    if (str(c, 'image').trim() === '') causes.push(cause.required(`${field}.image`));
  }
  causes.push(...validateContainerResources(spec, path));
  return causes;
}
