// jwt[].issuer: url, discoveryURL, certificateAuthority, audiences,
// audienceMatchPolicy (kube: validateIssuer and friends).
import { X509Certificate } from 'node:crypto';
import type { IssuerSpec } from './authnconfig-types.js';
import { list, object, string, type Errors } from './authnconfig-read.js';
import { fieldError, type FieldPath } from './fielderrors.js';

function httpsUrl(value: string, p: FieldPath, errs: Errors): boolean {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    errs.push(fieldError.invalid(p, value, 'must be a valid URL'));
    return false;
  }
  const before = errs.length;
  if (u.protocol !== 'https:') errs.push(fieldError.invalid(p, value, 'URL scheme must be https'));
  if (u.username !== '' || u.password !== '') errs.push(fieldError.invalid(p, value, 'URL must not contain a username or password'));
  if (u.search !== '' || value.includes('?')) errs.push(fieldError.invalid(p, value, 'URL must not contain a query'));
  if (u.hash !== '' || value.includes('#')) errs.push(fieldError.invalid(p, value, 'URL must not contain a fragment'));
  return errs.length === before;
}

function pemCertificates(pem: string): X509Certificate[] {
  const blocks = pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  return blocks.map((b) => new X509Certificate(b));
}

function certificateAuthority(value: string, p: FieldPath, errs: Errors): void {
  try {
    if (pemCertificates(value).length === 0) errs.push(fieldError.invalid(p, '<omitted>', 'must contain at least one PEM certificate'));
  } catch (err) {
    errs.push(fieldError.invalid(p, '<omitted>', `must be valid PEM certificates: ${err instanceof Error ? err.message : String(err)}`));
  }
}

export interface IssuerContext {
  readonly disallowedIssuers: readonly string[];
}

export function validateIssuer(raw: unknown, p: FieldPath, ctx: IssuerContext, errs: Errors): IssuerSpec | undefined {
  const o = object(raw, p, ['url', 'discoveryURL', 'certificateAuthority', 'audiences', 'audienceMatchPolicy', 'egressSelectorType'], errs);
  if (!o) {
    errs.push(fieldError.required(p.child('url')));
    return undefined;
  }
  const before = errs.length;
  const url = string(o.url, p.child('url'), errs);
  if (url === undefined || url === '') errs.push(fieldError.required(p.child('url')));
  else if (httpsUrl(url, p.child('url'), errs) && ctx.disallowedIssuers.includes(url)) {
    errs.push(fieldError.invalid(p.child('url'), url, `URL must not overlap with disallowed issuers: ${JSON.stringify(ctx.disallowedIssuers)}`));
  }
  const discoveryURL = string(o.discoveryURL, p.child('discoveryURL'), errs);
  if (discoveryURL !== undefined && discoveryURL !== '') {
    if (httpsUrl(discoveryURL, p.child('discoveryURL'), errs) && url !== undefined && stripSlash(discoveryURL) === stripSlash(url)) {
      errs.push(fieldError.invalid(p.child('discoveryURL'), discoveryURL, 'discoveryURL must be different from URL'));
    }
  }
  const ca = string(o.certificateAuthority, p.child('certificateAuthority'), errs);
  if (ca !== undefined && ca !== '') certificateAuthority(ca, p.child('certificateAuthority'), errs);
  if (o.egressSelectorType !== undefined) errs.push(fieldError.forbidden(p.child('egressSelectorType'), 'egress selection is not supported'));

  const audiences: string[] = [];
  const ap = p.child('audiences');
  list(o.audiences, ap, errs).forEach((a, i) => {
    const s = string(a, ap.index(i), errs);
    if (s === undefined) return;
    if (s === '') errs.push(fieldError.invalid(ap.index(i), s, "audience can't be empty"));
    else if (audiences.includes(s)) errs.push(fieldError.duplicate(ap.index(i), s));
    else audiences.push(s);
  });
  if (o.audiences === undefined || (Array.isArray(o.audiences) && o.audiences.length === 0))
    errs.push(fieldError.required(ap, 'at least one audience is required'));
  const policy = string(o.audienceMatchPolicy, p.child('audienceMatchPolicy'), errs);
  if (policy !== undefined && policy !== '' && policy !== 'MatchAny') {
    errs.push(fieldError.unsupported(p.child('audienceMatchPolicy'), policy, ['MatchAny']));
  } else if (audiences.length > 1 && policy !== 'MatchAny') {
    errs.push(fieldError.invalid(p.child('audienceMatchPolicy'), policy ?? '', 'audienceMatchPolicy must be MatchAny for multiple audiences'));
  }
  if (errs.length > before || url === undefined) return undefined;
  return Object.freeze({
    url,
    ...(discoveryURL ? { discoveryURL } : {}),
    ...(ca ? { certificateAuthority: ca } : {}),
    audiences: Object.freeze(audiences),
    ...(policy === 'MatchAny' ? { audienceMatchPolicy: 'MatchAny' as const } : {}),
  });
}

function stripSlash(u: string): string {
  return u.endsWith('/') ? u.slice(0, -1) : u;
}
