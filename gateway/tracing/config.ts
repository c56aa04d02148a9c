// The --tracing-config-file format: kube's TracingConfiguration
// (apiserver.config.k8s.io v1, v1beta1 and v1alpha1 alike: `endpoint`,
// `samplingRatePerMillion`), read strictly — unknown fields, wrong types and
// out-of-range values are errors naming the field — and turned into the URL
// the OTLP/HTTP exporter posts to.
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../../lib/config/error.js';
import { hasOwn, ownValue } from '../../lib/api/own.js';
import { fieldError, FieldPath } from '../config/fielderrors.js';

export const TRACING_API_VERSIONS = ['apiserver.config.k8s.io/v1', 'apiserver.config.k8s.io/v1beta1', 'apiserver.config.k8s.io/v1alpha1'] as const;

/**
 * OTLP over HTTP listens on 4318 (kube's default, localhost:4317, is the OTLP
 * gRPC port, which this exporter cannot speak).
 */
export const DEFAULT_ENDPOINT = 'localhost:4318';
const MILLION = 1_000_000;

export interface TracingConfiguration {
  /** As written in the file (or the default). */
  readonly endpoint: string;
  /** Where spans are POSTed: `http(s)://host:port/v1/traces` unless the endpoint names a path. */
  readonly url: string;
  /** Root requests sampled per million; a request with a parent follows its parent's decision. */
  readonly samplingRatePerMillion: number;
}

/**
 * The endpoint as kube reads it (`host:port`, or a URL when it contains `//`),
 * for an HTTP exporter: `host:port` → `http://host:port/v1/traces` (kube's
 * gRPC default is plaintext too); an http or https URL is used as given, with
 * `/v1/traces` added when it has no path.
 */
export function exportUrl(endpoint: string): string | { error: string } {
  const withScheme = endpoint.includes('//') ? endpoint : `http://${endpoint}`;
  let u: URL;
  try {
    u = new URL(withScheme);
  } catch {
    return { error: 'must be host:port or an http(s) URL' };
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    return { error: `scheme ${u.protocol.slice(0, -1)} is not supported: spans are sent by OTLP over HTTP (http or https)` };
  if (u.hostname === '') return { error: 'must name a host' };
  if (u.username !== '' || u.password !== '') return { error: 'must not contain credentials' };
  if (u.pathname === '/' || u.pathname === '') u.pathname = '/v1/traces';
  return u.toString();
}

/** The endpoint as an error may quote it: user info never leaves the file. */
function withoutCredentials(endpoint: string): string {
  return endpoint.replace(/(\/\/)[^/@]*@/, '$1<redacted>@');
}

export function parseTracingConfiguration(text: string, source: string): TracingConfiguration {
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    throw new ConfigError(`not valid YAML or JSON: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`, { file: source });
  }
  const root = FieldPath.root();
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new ConfigError('must be a TracingConfiguration object', { file: source });
  const errs: string[] = [];
  for (const k of Object.keys(doc)) {
    if (!['apiVersion', 'kind', 'endpoint', 'samplingRatePerMillion'].includes(k)) errs.push(fieldError.unknown(root.child(k)));
  }
  const apiVersion = ownValue(doc, 'apiVersion');
  if (!(TRACING_API_VERSIONS as readonly unknown[]).includes(apiVersion))
    errs.push(fieldError.unsupported(root.child('apiVersion'), apiVersion ?? '', TRACING_API_VERSIONS));
  const kind = ownValue(doc, 'kind');
  if (kind !== 'TracingConfiguration') errs.push(fieldError.unsupported(root.child('kind'), kind ?? '', ['TracingConfiguration']));

  let endpoint = DEFAULT_ENDPOINT;
  let url = '';
  const rawEndpoint = ownValue(doc, 'endpoint');
  if (hasOwn(doc, 'endpoint') && rawEndpoint !== null) {
    if (typeof rawEndpoint !== 'string') errs.push(fieldError.type(root.child('endpoint'), rawEndpoint, 'a string'));
    else endpoint = rawEndpoint;
  }
  const parsed = exportUrl(endpoint);
  if (typeof parsed === 'string') url = parsed;
  else if (typeof rawEndpoint === 'string' || rawEndpoint === undefined)
    errs.push(fieldError.invalid(root.child('endpoint'), withoutCredentials(endpoint), parsed.error));

  let rate = 0;
  const rawRate = ownValue(doc, 'samplingRatePerMillion');
  if (hasOwn(doc, 'samplingRatePerMillion') && rawRate !== null) {
    const p = root.child('samplingRatePerMillion');
    if (typeof rawRate !== 'number' || !Number.isInteger(rawRate)) errs.push(fieldError.type(p, rawRate, 'an integer'));
    else if (rawRate < 0) errs.push(fieldError.invalid(p, rawRate, 'sampling rate must be positive'));
    else if (rawRate > MILLION) errs.push(fieldError.invalid(p, rawRate, 'sampling rate per million must be less than or equal to one million'));
    else rate = rawRate;
  }
  if (errs.length > 0) throw new ConfigError(errs.join('; '), { file: source });
  return Object.freeze({ endpoint, url, samplingRatePerMillion: rate });
}
