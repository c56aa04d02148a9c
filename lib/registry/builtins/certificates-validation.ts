// CertificateSigningRequest validation as kube's certificates validation for
// v1: a request that parses and whose signature verifies, a well-formed
// signerName (not the legacy one), known usages without duplicates,
// expirationSeconds of at least 600, conditions that make sense together, and
// a status.certificate of CERTIFICATE blocks only. The update path decides what
// may change (certificates.ts prepareForUpdate); what is left is checked here:
// no condition removed, a certificate set once and only on an approved request.
import { X509Certificate } from 'node:crypto';
import { isPlainObject, type KObject } from '../../api/meta.js';
import { cause, type StatusCause } from '../../api/status.js';
import { parseCsrBase64 } from '../../certificates/csr.js';
import { certificateOf, conditionsOf, isApproved } from '../../certificates/conditions.js';
import { isKnownUsage, KNOWN_USAGES } from '../../certificates/usages.js';
import { isDNS1123Label, isDNS1123Subdomain, tooLong } from '../names.js';

export const LEGACY_UNKNOWN_SIGNER = 'kubernetes.io/legacy-unknown';

const TRUE_ONLY = new Set(['Approved', 'Denied', 'Failed']);
const ALL_STATUS = ['False', 'True', 'Unknown'];
const SUBDOMAIN_MAX = 253;
const LABEL_MAX = 63;

/** core validation's ValidateSignerName: `<domain>/<path>`, each part DNS labels / subdomains. */
export function validateSignerName(field: string, name: string): StatusCause[] {
  if (name === '') return [cause.required(field)];
  const segments = name.split('/');
  if (segments.length !== 2) return [cause.invalid(field, name, "must be a fully qualified domain and path of the form 'example.com/signer-name'")];
  const [domain, path] = segments as [string, string];
  const causes: StatusCause[] = [];
  if (domain.length > SUBDOMAIN_MAX) causes.push(tooLong(field, SUBDOMAIN_MAX));
  const labels = domain.split('.');
  for (const l of labels) {
    const errs = isDNS1123Label(l);
    if (errs.length) {
      causes.push(...errs.map((e) => cause.invalid(field, domain, `validating label "${l}": ${e}`)));
      break;
    }
  }
  if (labels.length < 2) causes.push(cause.invalid(field, domain, 'should be a domain with at least two segments separated by dots'));
  for (const l of path.split('.')) {
    const errs = isDNS1123Subdomain(l);
    if (errs.length) {
      causes.push(...errs.map((e) => cause.invalid(field, path, `validating label "${l}": ${e}`)));
      break;
    }
  }
  const max = SUBDOMAIN_MAX + SUBDOMAIN_MAX + LABEL_MAX + 2;
  if (name.length > max) causes.push(tooLong(field, max));
  return causes;
}

function requestCauses(spec: Record<string, unknown>): StatusCause[] {
  const raw = spec['request'];
  if (typeof raw !== 'string' || raw === '') return [cause.invalid('spec.request', '', 'PEM block type must be CERTIFICATE REQUEST')];
  try {
    parseCsrBase64(raw);
    return [];
  } catch (err) {
    // The value is the client's own request: kube shows the bytes, a summary is enough to find it.
    return [cause.invalid('spec.request', '<request data>', (err as Error).message)];
  }
}

function usageCauses(spec: Record<string, unknown>): StatusCause[] {
  const usages = Array.isArray(spec['usages']) ? (spec['usages'] as unknown[]) : [];
  if (usages.length === 0) return [cause.required('spec.usages', 'usages must be provided')];
  const causes: StatusCause[] = [];
  const seen = new Set<unknown>();
  usages.forEach((u, i) => {
    if (typeof u !== 'string' || !isKnownUsage(u)) causes.push(cause.notSupported(`spec.usages[${i}]`, u, KNOWN_USAGES));
    if (seen.has(u)) causes.push(cause.duplicate(`spec.usages[${i}]`, u));
    seen.add(u);
  });
  return causes;
}

function conditionCauses(csr: KObject, allowBoth: boolean): StatusCause[] {
  const causes: StatusCause[] = [];
  const seen = new Set<unknown>();
  let approved = false;
  let denied = false;
  conditionsOf(csr).forEach((c, i) => {
    const f = `status.conditions[${i}]`;
    const type = c['type'];
    const status = c['status'];
    if (!type) causes.push(cause.required(`${f}.type`));
    const allowed = typeof type === 'string' && TRUE_ONLY.has(type) ? ['True'] : ALL_STATUS;
    if (!status) causes.push(cause.required(`${f}.status`));
    else if (!allowed.includes(status as string)) causes.push(cause.notSupported(`${f}.status`, status, allowed));
    if (!allowBoth && (type === 'Approved' || type === 'Denied')) {
      if ((type === 'Approved' && denied) || (type === 'Denied' && approved))
        causes.push(cause.invalid(`${f}.type`, type, 'Approved and Denied conditions are mutually exclusive'));
      if (type === 'Approved') approved = true;
      else denied = true;
    }
    if (seen.has(type)) causes.push(cause.duplicate(`${f}.type`, type));
    seen.add(type);
  });
  return causes;
}

/** kube's validateCertificate: CERTIFICATE blocks only, without headers, each a certificate. */
function certificateCauses(csr: KObject): StatusCause[] {
  const raw = certificateOf(csr);
  if (raw === '') return [];
  const fail = (why: string) => [cause.invalid('status.certificate', '<certificate data>', why)];
  const text = Buffer.from(raw, 'base64').toString('latin1');
  const blocks = [...text.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----\r?\n([\s\S]*?)-----END \1-----/g)];
  if (blocks.length === 0) return fail('must contain at least one CERTIFICATE PEM block');
  for (const b of blocks) {
    if (b[1] !== 'CERTIFICATE') return fail(`only CERTIFICATE PEM blocks are allowed, found "${b[1]}"`);
    if (/^[A-Za-z-]+:/m.test(b[2]!)) return fail('no PEM block headers are permitted');
    try {
      new X509Certificate(Buffer.from(b[2]!.replace(/\s+/g, ''), 'base64'));
    } catch (err) {
      return fail(`x509: malformed certificate: ${(err as Error).message}`);
    }
  }
  return [];
}

function countOf(csr: KObject, type: string): number {
  return conditionsOf(csr).filter((c) => c['type'] === type).length;
}

function updateCauses(csr: KObject, old: KObject): StatusCause[] {
  const causes: StatusCause[] = [];
  for (const type of ['Approved', 'Denied', 'Failed']) {
    if (countOf(csr, type) < countOf(old, type)) causes.push(cause.forbidden('status.conditions', `updates may not remove a condition of type "${type}"`));
  }
  const cert = certificateOf(csr);
  const before = certificateOf(old);
  if (cert !== before) {
    if (before !== '') causes.push(cause.forbidden('status.certificate', 'updates may not modify existing certificate content'));
    else if (!isApproved(csr)) causes.push(cause.forbidden('status.certificate', 'a certificate may only be set on an approved request'));
  }
  return causes;
}

export function validateCsr(csr: KObject, old: KObject | undefined): StatusCause[] {
  const spec = isPlainObject(csr['spec']) ? csr['spec'] : {};
  const oldSpec = old && isPlainObject(old['spec']) ? old['spec'] : undefined;
  const signer = typeof spec['signerName'] === 'string' ? spec['signerName'] : '';
  const expiration = spec['expirationSeconds'];
  // An update keeps the stored spec (prepareForUpdate): its request was checked on create.
  const specChecked = oldSpec !== undefined && spec === oldSpec;
  const causes: StatusCause[] = [];
  if (!specChecked) {
    causes.push(...requestCauses(spec), ...usageCauses(spec));
    if (signer === LEGACY_UNKNOWN_SIGNER) causes.push(cause.invalid('spec.signerName', signer, 'the legacy signerName is not allowed via this API version'));
    else causes.push(...validateSignerName('spec.signerName', signer));
    if (typeof expiration === 'number' && expiration < 600)
      causes.push(cause.invalid('spec.expirationSeconds', expiration, 'may not specify a duration less than 600 seconds (10 minutes)'));
  }
  // A stored object with both conditions is tolerated on update, as kube does.
  const bothBefore = old !== undefined && countOf(old, 'Approved') > 0 && countOf(old, 'Denied') > 0;
  causes.push(...conditionCauses(csr, bothBefore), ...certificateCauses(csr));
  if (old) causes.push(...updateCauses(csr, old));
  return causes;
}
