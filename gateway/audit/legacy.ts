// --audit-log-format=legacy: kube's one-line text form of an event
// (audit.EventString): the request's time, then id, stage, first source IP,
// verb, user and groups, impersonation, user agent, namespace, URI and the
// response code, each quoted as Go's %q quotes.

import type { AuditEvent } from './event.js';

export function legacyLine(ev: AuditEvent): string {
  let username = '<none>';
  let groups = '<none>';
  if (ev.user.username !== '') {
    username = ev.user.username;
    if (ev.user.groups && ev.user.groups.length > 0) groups = quotedList(ev.user.groups);
  }
  let as = '<self>';
  let asGroups = '<lookup>';
  if (ev.impersonatedUser) {
    as = ev.impersonatedUser.username;
    if (ev.impersonatedUser.groups) asGroups = quotedList(ev.impersonatedUser.groups);
  }
  const namespace = ev.objectRef?.namespace || '<none>';
  const response = ev.responseStatus ? String(ev.responseStatus.code) : '<deferred>';
  const ip = ev.sourceIPs[0] ?? '<unknown>';
  return (
    `${rfc3339Nano(ev.requestReceivedTimestamp)} AUDIT: id=${goQuote(ev.auditID)} stage=${goQuote(ev.stage)} ip=${goQuote(ip)} method=${goQuote(ev.verb)} ` +
    `user=${goQuote(username)} groups=${goQuote(groups)} as=${goQuote(as)} asgroups=${goQuote(asGroups)} user-agent=${goQuote(ev.userAgent ?? '')} ` +
    `namespace=${goQuote(namespace)} uri=${goQuote(ev.requestURI)} response="${response}"`
  );
}

function quotedList(xs: readonly string[]): string {
  return xs.map(goQuote).join(',');
}

/** MicroTime → Go's RFC3339Nano, which drops trailing zeros of the fraction (and the dot with them). */
function rfc3339Nano(micro: string): string {
  return micro.replace(/\.(\d+)Z$/, (_, f: string) => {
    const t = f.replace(/0+$/, '');
    return t === '' ? 'Z' : `.${t}Z`;
  });
}

const ESCAPES: ReadonlyMap<string, string> = new Map([
  ['\x07', '\\a'],
  ['\b', '\\b'],
  ['\f', '\\f'],
  ['\n', '\\n'],
  ['\r', '\\r'],
  ['\t', '\\t'],
  ['\v', '\\v'],
  ['"', '\\"'],
  ['\\', '\\\\'],
]);

/** strconv.Quote for what events hold: control characters escaped, printable text as is. */
export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    const esc = ESCAPES.get(ch);
    if (esc !== undefined) out += esc;
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if ((cp >= 0x80 && cp < 0xa0) || cp === 0x2028 || cp === 0x2029 || (cp >= 0xd800 && cp < 0xe000)) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}
