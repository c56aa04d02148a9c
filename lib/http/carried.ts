// Headers the request chain decides before anyone answers (Audit-Id, APF's
// X-Kubernetes-PF-*), carried on the response until the one writeHead of
// whoever answers, which adds them (`writeHeadWith`). Why not setHeader: one
// setHeader puts Node's writeHead on its slow path, where every header of
// the answer is set again one by one into a header map. A ServerResponse
// answered with 3 headers took 0.32 µs in writeHead alone, 1.47 µs after a
// setHeader('Audit-Id'), 1.84 µs with APF's two more; 0.45 / 0.74 µs with the
// same headers carried (bench/micro.ts writehead).
// Since nothing is set with setHeader on the hot path, res.getHeader() no
// longer sees the answer's headers: what later steps need (the length for
// apiserver_response_sizes, the content type for the audit event) is
// read back from the headers writeHeadWith wrote (`sentHeader`).
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { Exchange } from './exchange.js';

/** A writeHead headers argument: an object, or Node's flat [name, value, …] array. */
export type HeadArg = Record<string, string | number | string[]> | OutgoingHttpHeaders | string[];

/** Told the status code just before writeHeadWith writes the head (an object, not a closure: no function made per response). */
export interface HeadHook {
  beforeHead(code: number): void;
}

/** Adds a header to the answer, whoever writes it (the name as it goes on the wire). */
export function carryHeader(x: Exchange, name: string, value: string): void {
  if (x.res.headersSent) return;
  const list = x.carried;
  if (list) list.push(name, value);
  else x.carried = [name, value];
}

function isCarried(carried: readonly string[], name: string): boolean {
  for (let i = 0; i < carried.length; i += 2) if (sameAsciiName(carried[i]!, name)) return true;
  return false;
}

/**
 * `a.toLowerCase() === b.toLowerCase()` for `a` a header name of our own (ASCII), without the two lower-case
 * copies: a backend's Audit-Id and APF's two names were three pairs of fresh strings a proxied GET. For `b` in
 * Latin-1 (undici's answer names) it is the same test: no other Latin-1 letter lower-cases to ASCII.
 */
function sameAsciiName(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  if (a === b) return true;
  for (let i = 0; i < a.length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    // Bit 0x20 folds an ASCII letter's case; only letters may differ by it.
    if (x !== y && ((x | 0x20) !== (y | 0x20) || (x | 0x20) < 97 || (x | 0x20) > 122)) return false;
  }
  return true;
}

/**
 * writeHead with the carried headers added to `headers` (which it may change).
 * Every answer the gateway and the core backend write goes through here.
 */
export function writeHeadWith(x: Exchange, code: number, headers: HeadArg, statusText?: string): ServerResponse {
  const carried = x.carried;
  if (carried) {
    if (Array.isArray(headers)) {
      // A backend's answer (the proxy's flat list) may carry its own Audit-Id or APF headers: ours replace them.
      // Kept pairs move down in place (a splice made an array of the removed pair for each).
      let w = 0;
      let i = 0;
      for (; i + 1 < headers.length; i += 2) {
        if (isCarried(carried, headers[i]!)) continue;
        if (w !== i) {
          headers[w] = headers[i]!;
          headers[w + 1] = headers[i + 1]!;
        }
        w += 2;
      }
      // An odd last element (not a pair) stays, as it did.
      if (i < headers.length) headers[w++] = headers[i]!;
      headers.length = w;
      for (let j = 0; j < carried.length; j++) headers.push(carried[j]!);
    } else {
      const h = headers as Record<string, string | number | string[]>;
      for (let i = 0; i + 1 < carried.length; i += 2) h[carried[i]!] = carried[i + 1]!;
    }
  }
  x.sent = headers;
  x.headHook?.beforeHead(code);
  const res = x.res;
  const r = statusText === undefined ? res.writeHead(code, headers as OutgoingHttpHeaders) : res.writeHead(code, statusText, headers as OutgoingHttpHeaders);
  // Its job is done once the head holds it (carryHeader adds nothing after): a watch would keep the array (~220 B) for its life.
  if (res.headersSent) x.carried = undefined;
  return r;
}

/** A header of the answer (name in lower case): what writeHeadWith wrote, else what was set on the response. */
export function sentHeader(x: Exchange, lowerName: string): string | number | string[] | undefined {
  const sent = x.sent;
  if (sent !== undefined) {
    if (Array.isArray(sent)) {
      for (let i = 0; i + 1 < sent.length; i += 2) if (sent[i]!.length === lowerName.length && sent[i]!.toLowerCase() === lowerName) return sent[i + 1];
    } else {
      // Writers use one spelling; the set ones are looked up lower-case by Node below.
      for (const k of Object.keys(sent))
        if (k.length === lowerName.length && k.toLowerCase() === lowerName) return (sent as Record<string, string | number | string[]>)[k];
    }
  }
  return x.res.getHeader(lowerName);
}

/** The answer's Content-Length as a number, when it had one. */
export function sentLength(x: Exchange): number | undefined {
  const sent = x.sent;
  // The spelling of our own writers first: no walk of the header names for the common answer.
  const own = sent === undefined ? undefined : Array.isArray(sent) ? ownLength(sent) : (sent as Record<string, unknown>)['Content-Length'];
  const v = own ?? sentHeader(x, 'content-length');
  return typeof v === 'number' ? v : typeof v === 'string' ? Number(v) : undefined;
}

/** The `Content-Length` of a flat head list in our writers' spelling (lib/http/respond.ts): no lower-casing walk. */
function ownLength(list: readonly string[]): string | undefined {
  for (let i = 0; i + 1 < list.length; i += 2) if (list[i] === 'Content-Length') return list[i + 1];
  return undefined;
}
