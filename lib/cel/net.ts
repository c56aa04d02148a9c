// The Kubernetes IP and CIDR libraries (k8s.io/apiserver/pkg/cel/library/ip.go,
// cidr.go): ip(), isIP(), cidr(), isCIDR() and their methods. Values are
// one-entry maps under a marker key (see quantity.ts for why), holding the
// canonical form, so `==` compares addresses.
import { isIP as netIsIP } from 'node:net';
import { celFunc, celMap, celMethod, CelScalar, type CelFunc, type CelValue } from '@bufbuild/cel';
import { marked, markerKey } from './marker.js';

const IP_KEY = markerKey('k8s.ip');
const CIDR_KEY = markerKey('k8s.cidr');
const { DYN, STRING, BOOL, INT } = CelScalar;

interface Ip {
  readonly bytes: Uint8Array;
  readonly v6: boolean;
}

function v4Bytes(s: string): Uint8Array | undefined {
  const parts = s.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255)) return undefined;
  return Uint8Array.from(parts.map(Number));
}

function v6Bytes(s: string): Uint8Array | undefined {
  if (netIsIP(s) !== 6 || s.includes('%')) return undefined;
  let head = s;
  let tail4: Uint8Array | undefined;
  const lastColon = s.lastIndexOf(':');
  if (s.slice(lastColon + 1).includes('.')) {
    tail4 = v4Bytes(s.slice(lastColon + 1));
    if (!tail4) return undefined;
    head = `${s.slice(0, lastColon + 1)}0:0`;
  }
  const [l, r] = head.includes('::') ? (head.split('::') as [string, string]) : [head, undefined];
  const left = l ? l.split(':') : [];
  const right = r === undefined ? [] : r ? r.split(':') : [];
  const fill = r === undefined ? 0 : 8 - left.length - right.length;
  const groups = [...left, ...Array(fill).fill('0'), ...right].map((g) => parseInt(g, 16));
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 255;
  });
  if (tail4) out.set(tail4, 12);
  return out;
}

/** kube's ip(): IPv4 or IPv6, no zone, no IPv4-mapped IPv6. */
export function parseIp(s: string): Ip | { error: string } {
  const b4 = v4Bytes(s);
  if (b4) return { bytes: b4, v6: false };
  const b6 = v6Bytes(s);
  if (!b6) return { error: `IP Address ${JSON.stringify(s)} parse error during conversion from string: ParseAddr(${JSON.stringify(s)}): unable to parse IP` };
  if (b6.slice(0, 10).every((x) => x === 0) && b6[10] === 255 && b6[11] === 255) return { error: 'IPv4-mapped IPv6 address is not allowed' };
  return { bytes: b6, v6: true };
}

function ipString(ip: Ip): string {
  if (!ip.v6) return [...ip.bytes].join('.');
  const groups = Array.from({ length: 8 }, (_, i) => ((ip.bytes[2 * i]! << 8) | ip.bytes[2 * i + 1]!).toString(16));
  return new URL(`http://[${groups.join(':')}]`).hostname.slice(1, -1);
}

interface Cidr {
  readonly ip: Ip;
  readonly prefix: number;
}

export function parseCidr(s: string): Cidr | { error: string } {
  const slash = s.indexOf('/');
  const bad = { error: `network address parse error during conversion from string: netip.ParsePrefix(${JSON.stringify(s)}): invalid prefix` };
  if (slash < 0) return bad;
  const ip = parseIp(s.slice(0, slash));
  if ('error' in ip) return bad;
  const bits = s.slice(slash + 1);
  if (!/^(0|[1-9]\d{0,2})$/.test(bits) || Number(bits) > (ip.v6 ? 128 : 32)) return bad;
  return { ip, prefix: Number(bits) };
}

const ipValue = (ip: Ip) => celMap(new Map([[IP_KEY, ipString(ip)]]));
const cidrValue = (c: Cidr) => celMap(new Map([[CIDR_KEY, `${ipString(c.ip)}/${c.prefix}`]]));

function ipOf(v: CelValue): Ip {
  const s = typeof v === 'string' ? v : marked(v, IP_KEY);
  if (s === undefined) throw new Error('no such overload: not an IP');
  const ip = parseIp(s);
  if ('error' in ip) throw new Error(ip.error);
  return ip;
}

function cidrOf(v: CelValue): Cidr {
  const s = typeof v === 'string' ? v : marked(v, CIDR_KEY);
  if (s === undefined) throw new Error('no such overload: not a CIDR');
  const c = parseCidr(s);
  if ('error' in c) throw new Error(c.error);
  return c;
}

function masked(ip: Ip, prefix: number): Ip {
  const out = Uint8Array.from(ip.bytes);
  for (let i = 0; i < out.length; i++) {
    const keep = Math.max(0, Math.min(8, prefix - 8 * i));
    out[i] = out[i]! & ((0xff << (8 - keep)) & 0xff);
  }
  return { bytes: out, v6: ip.v6 };
}

function contains(c: Cidr, ip: Ip): boolean {
  if (c.ip.v6 !== ip.v6) return false;
  const a = masked(c.ip, c.prefix).bytes;
  const b = masked(ip, c.prefix).bytes;
  return a.every((x, i) => x === b[i]);
}

const eq = (ip: Ip, ...bytes: number[]) => bytes.every((x, i) => ip.bytes[i] === x);
const isUnspecified = (ip: Ip) => ip.bytes.every((x) => x === 0);
const isLoopback = (ip: Ip) => (ip.v6 ? ip.bytes.slice(0, 15).every((x) => x === 0) && ip.bytes[15] === 1 : ip.bytes[0] === 127);
const isLinkLocalMulticast = (ip: Ip) => (ip.v6 ? eq(ip, 0xff) && (ip.bytes[1]! & 0x0f) === 0x02 : eq(ip, 224, 0, 0));
const isLinkLocalUnicast = (ip: Ip) => (ip.v6 ? ip.bytes[0] === 0xfe && (ip.bytes[1]! & 0xc0) === 0x80 : eq(ip, 169, 254));
const isMulticast = (ip: Ip) => (ip.v6 ? ip.bytes[0] === 0xff : (ip.bytes[0]! & 0xf0) === 0xe0);
const isBroadcast = (ip: Ip) => !ip.v6 && ip.bytes.every((x) => x === 255);

export const netFunctions: readonly CelFunc[] = [
  celFunc('isIP', [STRING], BOOL, (s: string) => !('error' in parseIp(s))),
  celFunc('ip', [STRING], DYN, (s: string) => ipValue(ipOf(s))),
  celFunc('isCIDR', [STRING], BOOL, (s: string) => !('error' in parseCidr(s))),
  celFunc('cidr', [STRING], DYN, (s: string) => cidrValue(cidrOf(s))),
  celMethod('family', DYN, [], INT, function (this: CelValue) {
    return ipOf(this).v6 ? 6n : 4n;
  }),
  celMethod('isUnspecified', DYN, [], BOOL, function (this: CelValue) {
    return isUnspecified(ipOf(this));
  }),
  celMethod('isLoopback', DYN, [], BOOL, function (this: CelValue) {
    return isLoopback(ipOf(this));
  }),
  celMethod('isLinkLocalMulticast', DYN, [], BOOL, function (this: CelValue) {
    return isLinkLocalMulticast(ipOf(this));
  }),
  celMethod('isLinkLocalUnicast', DYN, [], BOOL, function (this: CelValue) {
    return isLinkLocalUnicast(ipOf(this));
  }),
  celMethod('isGlobalUnicast', DYN, [], BOOL, function (this: CelValue) {
    const ip = ipOf(this);
    return !isUnspecified(ip) && !isLoopback(ip) && !isMulticast(ip) && !isLinkLocalUnicast(ip) && !isBroadcast(ip);
  }),
  celMethod('containsIP', DYN, [DYN], BOOL, function (this: CelValue, o: CelValue) {
    return contains(cidrOf(this), ipOf(o));
  }),
  celMethod('containsCIDR', DYN, [DYN], BOOL, function (this: CelValue, o: CelValue) {
    const c = cidrOf(this);
    const d = cidrOf(o);
    return d.prefix >= c.prefix && contains(c, d.ip);
  }),
  celMethod('ip', DYN, [], DYN, function (this: CelValue) {
    return ipValue(cidrOf(this).ip);
  }),
  celMethod('masked', DYN, [], DYN, function (this: CelValue) {
    const c = cidrOf(this);
    return cidrValue({ ip: masked(c.ip, c.prefix), prefix: c.prefix });
  }),
  celMethod('prefixLength', DYN, [], INT, function (this: CelValue) {
    return BigInt(cidrOf(this).prefix);
  }),
];
