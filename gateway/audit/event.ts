// The audit.k8s.io/v1 Event of one request, in kube's field order, and the
// pieces kube fills it from: source IPs as utilnet.SourceIPs reads them, the
// object reference from the request info, microsecond timestamps.
import type { IncomingMessage } from 'node:http';
import type { UserInfo } from '../../lib/api/meta.js';
import type { RequestInfo } from '../../lib/api/requestinfo.js';
import type { Level, Stage } from './policy.js';

export interface ObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

export interface ResponseStatus {
  metadata: Record<string, never>;
  status?: string;
  message?: string;
  reason?: string;
  details?: unknown;
  code: number;
}

export interface AuditEvent {
  kind: 'Event';
  apiVersion: 'audit.k8s.io/v1';
  level: Level;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  user: UserInfo;
  impersonatedUser?: UserInfo;
  sourceIPs: readonly string[];
  userAgent?: string;
  objectRef?: ObjectReference;
  responseStatus?: ResponseStatus;
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

const ORIGIN_US = Math.round(performance.timeOrigin * 1000);

/** Now, or `at` (a performance.now() value), as kube's MicroTime (`2026-11-25T18:40:00.123456Z`). */
export function microTime(at = performance.now()): string {
  const us = ORIGIN_US + Math.round(at * 1000);
  const second = Math.floor(us / 1_000_000);
  // The date and time up to the second change once a second: formatted then, not twice per audited request.
  if (second !== lastSecond) {
    lastSecond = second;
    secondPrefix = new Date(second * 1000).toISOString().slice(0, 20);
  }
  return `${secondPrefix}${String(us % 1_000_000).padStart(6, '0')}Z`;
}
let lastSecond = -1;
let secondPrefix = '';

/** X-Forwarded-For entries, then X-Real-Ip, then the peer, each once (kube's utilnet.SourceIPs). */
export function sourceIPs(req: IncomingMessage): readonly string[] {
  const fwd = req.headers['x-forwarded-for'];
  const real = req.headers['x-real-ip'];
  const out: string[] = [];
  if (typeof fwd === 'string')
    for (const part of fwd.split(',')) {
      const ip = part.trim();
      if (ip) out.push(ip);
    }
  if (typeof real === 'string' && real.trim() && !out.includes(real.trim())) out.push(real.trim());
  const peer = req.socket?.remoteAddress;
  if (peer && !out.includes(peer)) out.push(peer);
  return out;
}

export function objectRefOf(i: RequestInfo): ObjectReference | undefined {
  if (!i.isResourceRequest) return undefined;
  const ref: ObjectReference = { resource: i.resource };
  if (i.namespace) ref.namespace = i.namespace;
  if (i.name) ref.name = i.name;
  if (i.apiGroup) ref.apiGroup = i.apiGroup;
  ref.apiVersion = i.apiVersion;
  if (i.subresource) ref.subresource = i.subresource;
  return ref;
}

/** A user as the event shows it: no empty members. */
export function userOf(u: UserInfo): UserInfo {
  const shown: UserInfo = { username: u.username, groups: u.groups };
  if (u.uid) shown.uid = u.uid;
  if (u.extra && Object.keys(u.extra).length > 0) shown.extra = u.extra;
  if (u.groups.length === 0) delete (shown as { groups?: string[] }).groups;
  return shown;
}

/** Removes metadata.managedFields from an object or from each item of a list (omitManagedFields). */
export function withoutManagedFields(v: unknown): unknown {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return v;
  const o = v as Record<string, unknown>;
  const strip = (x: unknown): void => {
    if (x === null || typeof x !== 'object' || Array.isArray(x)) return;
    const m = Object.hasOwn(x, 'metadata') ? (x as Record<string, unknown>)['metadata'] : undefined;
    if (m !== null && typeof m === 'object' && !Array.isArray(m) && Object.hasOwn(m, 'managedFields')) delete (m as Record<string, unknown>)['managedFields'];
  };
  strip(o);
  const items = Object.hasOwn(o, 'items') ? o['items'] : undefined;
  if (Array.isArray(items)) items.forEach(strip);
  return o;
}

// Characters a JSON string cannot hold as they are: quote, backslash, controls, lone surrogates.
const ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string as JSON: most need no escaping and are quoted as they are (JSON.stringify's own call costs more). */
function quoted(s: string): string {
  return ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/**
 * A string as JSON, remembered, for the strings that come back request after
 * request (user agent, source IPs, resource and namespace, the authorization
 * reason); the ones that rarely repeat (audit IDs, request URIs, object
 * names) go through `quoted`, so they do not churn the memo. Long strings are
 * not kept, and the memo starts over past MEMO_SIZE, so what clients send
 * cannot grow it.
 */
function str(s: string): string {
  if (s.length > MEMO_LENGTH) return quoted(s);
  let json = memo.get(s);
  if (json === undefined) {
    json = quoted(s);
    if (memo.size >= MEMO_SIZE) memo.clear();
    memo.set(s, json);
  }
  return json;
}
const memo = new Map<string, string>();
const MEMO_SIZE = 4096;
const MEMO_LENGTH = 256;

function strings(a: readonly string[]): string {
  let out = '[';
  for (let i = 0; i < a.length; i++) out += (i === 0 ? '' : ',') + str(a[i]!);
  return `${out}]`;
}

function userJson(u: UserInfo): string {
  let out = `{"username":${quoted(u.username)}`;
  if (u.uid !== undefined) out += `,"uid":${quoted(u.uid)}`;
  if (u.groups !== undefined) out += `,"groups":${strings(u.groups)}`;
  if (u.extra !== undefined) out += `,"extra":${JSON.stringify(u.extra)}`;
  return `${out}}`;
}

/** `,"sourceIPs":[…],"userAgent":…` */
function clientJson(ips: readonly string[], ua: string | undefined): string {
  return ua === undefined ? `,"sourceIPs":${strings(ips)}` : `,"sourceIPs":${strings(ips)},"userAgent":${str(ua)}`;
}

/** Field by field in the struct's order (a loop over the names read each through a megamorphic keyed load). */
function refJson(r: ObjectReference): string {
  let out = '';
  if (r.resource !== undefined) out += `,"resource":${str(r.resource)}`;
  if (r.namespace !== undefined) out += `,"namespace":${str(r.namespace)}`;
  if (r.name !== undefined) out += `,"name":${quoted(r.name)}`;
  if (r.uid !== undefined) out += `,"uid":${quoted(r.uid)}`;
  if (r.apiGroup !== undefined) out += `,"apiGroup":${str(r.apiGroup)}`;
  if (r.apiVersion !== undefined) out += `,"apiVersion":${str(r.apiVersion)}`;
  if (r.resourceVersion !== undefined) out += `,"resourceVersion":${quoted(r.resourceVersion)}`;
  if (r.subresource !== undefined) out += `,"subresource":${str(r.subresource)}`;
  return out === '' ? '{}' : `{${out.slice(1)}}`;
}

function mapJson(m: Record<string, string>): string {
  let out = '';
  for (const k of Object.keys(m)) out += `${out === '' ? '{' : ','}${str(k)}:${str(m[k]!)}`;
  return out === '' ? '{}' : `${out}}`;
}

/** metav1.Status's field order; its TypeMeta is empty in an event. */
function statusJson(s: ResponseStatus): string {
  let out = '{"metadata":{}';
  if (s.status !== undefined) out += `,"status":${str(s.status)}`;
  if (s.message !== undefined) out += `,"message":${str(s.message)}`;
  if (s.reason !== undefined) out += `,"reason":${str(s.reason)}`;
  if (s.details !== undefined) out += `,"details":${JSON.stringify(s.details)}`;
  return `${out},"code":${s.code}}`;
}

/**
 * The event as one JSON line, in kube's field order (the Event struct's, so
 * the timestamps come after the objects, as kube writes them). Written by hand
 * for the fields every event has: JSON.stringify of the whole event was the
 * largest part of a Metadata-audited GET's audit cost. Bodies and details,
 * which are the client's data, go through JSON.stringify.
 */
export function eventJson(e: AuditEvent): string {
  let out = `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"${e.level}","auditID":${quoted(e.auditID)},"stage":"${e.stage}","requestURI":${quoted(e.requestURI)},"verb":${str(e.verb)},"user":`;
  out += userJson(e.user);
  if (e.impersonatedUser !== undefined) out += `,"impersonatedUser":${userJson(e.impersonatedUser)}`;
  out += clientJson(e.sourceIPs, e.userAgent);
  if (e.objectRef !== undefined) out += `,"objectRef":${refJson(e.objectRef)}`;
  if (e.responseStatus !== undefined) out += `,"responseStatus":${statusJson(e.responseStatus)}`;
  if (e.requestObject !== undefined) out += `,"requestObject":${JSON.stringify(e.requestObject)}`;
  if (e.responseObject !== undefined) out += `,"responseObject":${JSON.stringify(e.responseObject)}`;
  out += `,"requestReceivedTimestamp":"${e.requestReceivedTimestamp}","stageTimestamp":"${e.stageTimestamp}"`;
  if (e.annotations !== undefined) out += `,"annotations":${mapJson(e.annotations)}`;
  return `${out}}`;
}
