// Go's url.ParseRequestURI, for its error only: kube's `format.uri()` reports
// the parse error text (`parse "x": invalid URI for request`), so the checks
// are Go's, in Go's order, with Go's words. The parsed URL is not needed.

/** Go's %q of a string (strconv.Quote): control characters as \a \b … or \xNN. */
export function goQuote(s: string): string {
  const named: Readonly<Record<string, string>> = { '\u0007': '\\a', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v', '"': '\\"', '\\': '\\\\' };
  let out = '"';
  for (const c of s) {
    const code = c.codePointAt(0)!;
    if (Object.hasOwn(named, c)) out += named[c];
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += c;
  }
  return `${out}"`;
}

const isHex = (c: string | undefined) => c !== undefined && /^[0-9A-Fa-f]$/.test(c);

// The ASCII characters a host may not hold unescaped (url.shouldEscape in encodeHost mode).
const HOST_OK = /^[A-Za-z0-9\-_.~!$&'()*+,;=:[\]<>"]$/;

/** url.unescape's errors: a bad %-escape, and in a host a character that must be escaped. */
function unescapeError(s: string, host: boolean): string | undefined {
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '%') {
      if (!isHex(s[i + 1]) || !isHex(s[i + 2])) return `invalid URL escape ${goQuote(s.slice(i, i + 3))}`;
      // In a host only %25 and escapes of non-ASCII bytes are allowed (RFC 6874).
      if (host && parseInt(s[i + 1]!, 16) < 8 && s.slice(i, i + 3) !== '%25') return `invalid URL escape ${goQuote(s.slice(i, i + 3))}`;
      i += 2;
    } else if (host && c.charCodeAt(0) < 0x80 && !HOST_OK.test(c)) {
      return `invalid character ${goQuote(c)} in host name`;
    }
  }
  return undefined;
}

const validOptionalPort = (p: string) => p === '' || /^:[0-9]*$/.test(p);

function hostError(host: string): string | undefined {
  if (host.startsWith('[')) {
    const close = host.lastIndexOf(']');
    if (close < 0) return "missing ']' in host";
    const port = host.slice(close + 1);
    if (!validOptionalPort(port)) return `invalid port ${goQuote(port)} after host`;
  } else {
    const colon = host.lastIndexOf(':');
    if (colon >= 0 && !validOptionalPort(host.slice(colon))) return `invalid port ${goQuote(host.slice(colon))} after host`;
  }
  return unescapeError(host, true);
}

// url.validUserinfo: RFC 3986 userinfo characters, and '%' and '@' as Go allows.
const USERINFO = /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]*$/;

function authorityError(authority: string): string | undefined {
  const at = authority.lastIndexOf('@');
  const err = hostError(at < 0 ? authority : authority.slice(at + 1));
  if (err) return err;
  if (at < 0) return undefined;
  const userinfo = authority.slice(0, at);
  if (!USERINFO.test(userinfo)) return 'net/url: invalid userinfo';
  return unescapeError(userinfo, false);
}

/** The scheme and the rest (url.getScheme); an error when the URI starts with ':'. */
function splitScheme(s: string): { scheme: string; rest: string } | string {
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (/[A-Za-z]/.test(c)) continue;
    if (/[0-9+\-.]/.test(c)) { if (i === 0) return { scheme: '', rest: s }; continue; }
    if (c === ':') return i === 0 ? 'missing protocol scheme' : { scheme: s.slice(0, i), rest: s.slice(i + 1) };
    return { scheme: '', rest: s };
  }
  return { scheme: '', rest: s };
}

function reason(s: string): string | undefined {
  if ([...s].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) return 'net/url: invalid control character in URL';
  if (s === '') return 'empty url';
  if (s === '*') return undefined;
  const split = splitScheme(s);
  if (typeof split === 'string') return split;
  let rest = split.rest;
  // The query is kept raw, unchecked.
  if (!(rest.endsWith('?') && rest.split('?').length === 2)) rest = rest.split('?')[0]!;
  else rest = rest.slice(0, -1);
  if (!rest.startsWith('/')) return split.scheme !== '' ? undefined : 'invalid URI for request';
  if (split.scheme !== '' && rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    const err = authorityError(authority);
    if (err) return err;
    rest = slash < 0 ? '' : rest.slice(slash);
  }
  return unescapeError(rest, false);
}

/** The error of Go's url.ParseRequestURI(s) as err.Error() writes it, or undefined when it parses. */
export function parseRequestUriError(s: string): string | undefined {
  const r = reason(s);
  return r === undefined ? undefined : `parse ${goQuote(s)}: ${r}`;
}
