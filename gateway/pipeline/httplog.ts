// -v/--v as kube-apiserver's klog levels for requests: from 3, kube's httplog
// line once a request's answer is handed over (`"HTTP" verb="LIST"
// URI="/api/v1/pods" latency="1.2ms" userAgent=… audit-ID=… srcIP=… resp=200`,
// the verb as the request metrics name it, kube's NormalizedVerb; with the user added); from 6, a second line with the request's and the
// answer's headers. Never a body, a credential header or a token-like query
// value; every value is cut to a bounded length, so a line stays short
// whatever the request carries.
import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { RequestContext } from './context.js';
import { metricLabels } from './finish.js';

/**
 * Writes the request's lines; `at` is performance.now() when its answer was handed over, `srcIP` the
 * client's address read when the request came in (an HTTP/2 stream's socket is gone once it ended).
 */
export type HttpLog = (ctx: RequestContext, at: number, srcIP: string) => void;

/** kube's httplog level (withLoggingLevel). */
export const HTTPLOG_LEVEL = 3;
/** From this level the headers of the request and of its answer are logged too. */
export const DETAILS_LEVEL = 6;

const MAX_VALUE = 512;
const MAX_URI = 2048;
const MAX_LINE = 8192;
/** Headers whose value is a credential (or a session): logged as their name only. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie']);
const CREDENTIAL_NAME = /token|secret|password|passwd|credential|key/i;
const REDACTED = '[redacted]';

/** The logger for `-v=<verbosity>`; undefined below kube's httplog level (nothing is read or written per request). */
export function httpLogFor(verbosity: number, log: (msg: string) => void): HttpLog | undefined {
  if (verbosity < HTTPLOG_LEVEL) return undefined;
  const details = verbosity >= DETAILS_LEVEL;
  return (ctx, at, srcIP) => {
    log(requestLine(ctx, at, srcIP));
    if (details)
      log(
        bounded(
          `"HTTP details" audit-ID=${quote(auditId(ctx))} requestHeaders=${headersText(ctx.req.headers)} responseHeaders=${headersText(answerHeaders(ctx))}`,
        ),
      );
  };
}

/** The chain's `httpLog` member for `-v=<verbosity>` (none below kube's httplog level). */
export function httpLogOption(verbosity: number, log: (msg: string) => void): { httpLog?: HttpLog } {
  const httpLog = httpLogFor(verbosity, log);
  return httpLog ? { httpLog } : {};
}

function requestLine(ctx: RequestContext, at: number, srcIP: string): string {
  const req = ctx.req;
  const ua = req.headers['user-agent'];
  const hijacked = ctx.upgrade !== undefined && ctx.res.statusCode === 101;
  return bounded(
    `"HTTP" verb=${quote(metricLabels(ctx).labels.verb)} URI=${quote(cut(redactedUri(req.url ?? '/'), MAX_URI))} latency=${quote(goDuration(at - ctx.receivedAt))}` +
      ` userAgent=${quote(cut(typeof ua === 'string' ? ua : '', MAX_VALUE))} audit-ID=${quote(auditId(ctx))} srcIP=${quote(srcIP)}` +
      ` user=${quote(cut(ctx.user.username, MAX_VALUE))}${hijacked ? ' hijacked=true' : ` resp=${ctx.res.statusCode}`}`,
  );
}

function auditId(ctx: RequestContext): string {
  const id = ctx.req.headers['audit-id'];
  return typeof id === 'string' ? id : '';
}

/** Go's RemoteAddr of a request: `ip:port`, an IPv6 address in brackets. */
export function srcIpOf(req: IncomingMessage): string {
  const s = req.socket;
  const ip = s?.remoteAddress ?? '';
  return ip.includes(':') ? `[${ip}]:${s?.remotePort ?? 0}` : `${ip}:${s?.remotePort ?? 0}`;
}

/** The answer's headers: those set on the response, then those the writer handed to writeHead (lib/http/carried.ts). */
function answerHeaders(ctx: RequestContext): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = { ...ctx.res.getHeaders() };
  const sent = ctx.sent;
  if (Array.isArray(sent)) for (let i = 0; i + 1 < sent.length; i += 2) out[sent[i]!.toLowerCase()] = sent[i + 1]!;
  else if (sent !== undefined) for (const k of Object.keys(sent)) out[k.toLowerCase()] = (sent as OutgoingHttpHeaders)[k];
  return out;
}

/** The request URI with the value of any token-like query parameter (`access_token=…`) replaced. */
export function redactedUri(uri: string): string {
  const q = uri.indexOf('?');
  if (q < 0) return uri;
  const parts = uri.slice(q + 1).split('&');
  let changed = false;
  for (let i = 0; i < parts.length; i++) {
    const eq = parts[i]!.indexOf('=');
    const name = eq < 0 ? parts[i]! : parts[i]!.slice(0, eq);
    if (CREDENTIAL_NAME.test(safeDecode(name))) {
      parts[i] = `${name}=${REDACTED}`;
      changed = true;
    }
  }
  return changed ? `${uri.slice(0, q)}?${parts.join('&')}` : uri;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Headers as Go prints an http.Header (`map[Accept:[application/json] …]`), credentials as their name only, values cut. */
export function headersText(h: IncomingHttpHeaders | OutgoingHttpHeaders): string {
  const out: string[] = [];
  for (const name of Object.keys(h).sort()) {
    const v = h[name];
    if (v === undefined) continue;
    const values = Array.isArray(v) ? v.map(String) : [String(v)];
    const shown = CREDENTIAL_HEADERS.has(name) || CREDENTIAL_NAME.test(name) ? [REDACTED] : values.map((x) => cut(x, MAX_VALUE));
    out.push(`${cut(name, MAX_VALUE)}:[${shown.join(' ')}]`);
  }
  return `map[${out.join(' ')}]`;
}

function cut(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max)}…(${s.length - max} more)`;
}

function bounded(line: string): string {
  return cut(line, MAX_LINE);
}

/** Go's %q for the text klog writes (printable ASCII as is; quotes, backslashes and control characters escaped). */
function quote(s: string): string {
  return JSON.stringify(s);
}

/** Go's time.Duration String of `ms` milliseconds: 512ns, 12.5µs, 1.234567ms, 2.5s, 1m3.2s. */
export function goDuration(ms: number): string {
  const ns = Math.max(0, Math.round(ms * 1e6));
  if (ns === 0) return '0s';
  if (ns < 1e3) return `${ns}ns`;
  if (ns < 1e6) return `${trim(ns / 1e3, 3)}µs`;
  if (ns < 1e9) return `${trim(ns / 1e6, 6)}ms`;
  const totalS = ns / 1e9;
  const h = Math.floor(totalS / 3600);
  const m = Math.floor((totalS % 3600) / 60);
  const s = trim(totalS - h * 3600 - m * 60, 9);
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
}

function trim(n: number, digits: number): string {
  return n.toFixed(digits).replace(/\.?0+$/, '');
}
