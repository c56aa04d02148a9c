// The string formats kube-apiserver checks in custom resources (the
// kube-openapi strfmt registry, minus what apiextensions strips). A format
// outside this table is ignored, as kube ignores it.
import { isIP } from 'node:net';

const UUID = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID3 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const UUID4 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const UUID5 = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})?$/;
const DURATION_GO = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$/;
const DURATION_SCALA =
  /^\s*[-+]?\d+\s*(ns|us|ms|s|m|h|d|w|nanos?|nanoseconds?|micros?|microseconds?|millis?|milliseconds?|seconds?|minutes?|hours?|days?|weeks?)\s*$/;
const HOST_LABEL = /^[\p{L}\p{S}0-9]([\p{L}\p{S}0-9-]{0,61}[\p{L}\p{S}0-9])?$/u;
const MAC =
  /^([0-9a-f]{2}[:-]){5}[0-9a-f]{2}$|^([0-9a-f]{2}[:-]){7}[0-9a-f]{2}$|^([0-9a-f]{2}[:-]){19}[0-9a-f]{2}$|^([0-9a-f]{4}\.){2}[0-9a-f]{4}$|^([0-9a-f]{4}\.){3}[0-9a-f]{4}$|^([0-9a-f]{4}\.){9}[0-9a-f]{4}$/i;
const EMAIL_NAMED = /^[^<>]*<[^<>@\s]+@[^<>@\s]+>$/;
const EMAIL_ADDR = /^[^@\s<>]+@[^@\s<>]+$/;

function validDate(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  const days = [31, (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
  return d <= days[m - 1]!;
}

function hostname(s: string): boolean {
  if (s.length === 0 || s.length > 255) return false;
  const labels = s.split('.');
  if (labels.length > 1 && labels[labels.length - 1] === '') labels.pop();
  return labels.every((l) => HOST_LABEL.test(l));
}

function cidr(s: string): boolean {
  const slash = s.indexOf('/');
  if (slash < 0) return false;
  const ip = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  const v = isIP(ip);
  if (v === 0 || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (v === 4 ? 32 : 128);
}

function uri(s: string): boolean {
  // Go's url.ParseRequestURI: an absolute URI or an absolute path, no fragment.
  if (s.startsWith('/')) return !/\s/.test(s);
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(s)) return false;
  try {
    new URL(s);
    return true;
  } catch {
    return false;
  }
}

function isbn10(s: string): boolean {
  const d = s.replace(/[\s-]/g, '');
  if (!/^\d{9}[\dX]$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (i + 1) * Number(d[i]);
  sum += d[9] === 'X' ? 100 : 10 * Number(d[9]);
  return sum % 11 === 0;
}

function isbn13(s: string): boolean {
  const d = s.replace(/[\s-]/g, '');
  if (!/^\d{13}$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(d[i]) * (i % 2 === 0 ? 1 : 3);
  return (10 - (sum % 10)) % 10 === Number(d[12]);
}

const CHECKS: Readonly<Record<string, (s: string) => boolean>> = {
  bsonobjectid: (s) => /^[0-9a-f]{24}$/i.test(s),
  uri,
  email: (s) => EMAIL_ADDR.test(s) || EMAIL_NAMED.test(s),
  hostname,
  ipv4: (s) => isIP(s) !== 0 && s.includes('.'),
  ipv6: (s) => isIP(s) !== 0 && s.includes(':'),
  cidr,
  mac: (s) => MAC.test(s),
  uuid: (s) => UUID.test(s),
  uuid3: (s) => UUID3.test(s),
  uuid4: (s) => UUID4.test(s),
  uuid5: (s) => UUID5.test(s),
  isbn: (s) => isbn10(s) || isbn13(s),
  isbn10,
  isbn13,
  creditcard: (s) =>
    /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$/.test(
      s.replace(/\D/g, ''),
    ),
  ssn: (s) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(s),
  hexcolor: (s) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s),
  rgbcolor: (s) =>
    /^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$/.test(s),
  byte: (s) => BASE64.test(s) && s.length % 4 === 0,
  password: () => true,
  date: (s) => {
    const m = DATE.exec(s);
    return !!m && validDate(Number(m[1]), Number(m[2]), Number(m[3]));
  },
  duration: (s) => DURATION_GO.test(s) || s === '0' || DURATION_SCALA.test(s),
  datetime: (s) => {
    const m = DATE_TIME.exec(s);
    return !!m && validDate(Number(m[1]), Number(m[2]), Number(m[3])) && Number(m[4]) < 24 && Number(m[5]) < 60 && Number(m[6]) < 61;
  },
};

/** The check of a string format kube supports (`date-time` = `datetime`), or undefined when kube ignores the format. */
export function formatCheck(format: string): ((s: string) => boolean) | undefined {
  const name = format.replaceAll('-', '');
  return Object.hasOwn(CHECKS, name) ? CHECKS[name] : undefined;
}
