// Go's url.ParseRequestURI, for its error only: kube's `format.uri()` reports
// the parse error text (`parse "x": invalid URI for request`), so the checks
// are Go's, in Go's order, with Go's words. `parseUrl` is Go's url.Parse, for
// kube's `url()` (which accepts what ParseRequestURI accepts, then keeps
// url.Parse's result): its parts as the URL's getters give them.

/** Go's %q of a string (strconv.Quote): control characters as \a \b … or \xNN. */
export function goQuote(s: string): string {
  const named: Readonly<Record<string, string>> = {
    '\u0007': '\\a',
    '\b': '\\b',
    '\f': '\\f',
    '\n': '\\n',
    '\r': '\\r',
    '\t': '\\t',
    '\v': '\\v',
    '"': '\\"',
    '\\': '\\\\',
  };
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
    if (/[0-9+\-.]/.test(c)) {
      if (i === 0) return { scheme: '', rest: s };
      continue;
    }
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

/** A URL as Go's url.Parse leaves it, in the parts kube's getters read. */
export interface GoUrl {
  /** Lower-cased, as Go keeps it. */
  readonly scheme: string;
  /** Unescaped (`[fe80::1%en0]:80`). */
  readonly host: string;
  /** The path as written (Go's RawPath or, when that is its own encoding, Path's). */
  readonly rawPath: string;
  readonly rawQuery: string;
}

/** %XX escapes decoded as bytes of UTF-8 (Go's unescape; `+` is a space in a query component). */
export function unescape(s: string, plusIsSpace = false): string {
  if (!s.includes('%') && !(plusIsSpace && s.includes('+'))) return s;
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (c === '%' && isHex(s[i + 1]) && isHex(s[i + 2])) {
      bytes.push(parseInt(s.slice(i + 1, i + 3), 16));
      i += 2;
    } else if (plusIsSpace && c === '+') bytes.push(0x20);
    else {
      const cp = s.codePointAt(i)!;
      if (cp > 0xffff) i++;
      bytes.push(...Buffer.from(String.fromCodePoint(cp), 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * Go's url.Parse(s) of a string ParseRequestURI accepted (call
 * parseRequestUriError first): the fragment is cut before parsing, and a path
 * starting with `//` (not `///`) holds an authority, so a few strings
 * ParseRequestURI accepts fail here (`//a b`: a space in the host).
 */
export function parseUrl(s: string): GoUrl | { error: string } {
  const fail = (r: string) => ({ error: `parse ${goQuote(s)}: ${r}` });
  const hash = s.indexOf('#');
  const u = hash < 0 ? s : s.slice(0, hash);
  if (u === '*') return { scheme: '', host: '', rawPath: '*', rawQuery: '' };
  const split = splitScheme(u);
  if (typeof split === 'string') return fail(split);
  let rest = split.rest;
  let rawQuery = '';
  if (rest.endsWith('?') && rest.split('?').length === 2) rest = rest.slice(0, -1);
  else {
    const q = rest.indexOf('?');
    if (q >= 0) {
      rawQuery = rest.slice(q + 1);
      rest = rest.slice(0, q);
    }
  }
  const scheme = split.scheme.toLowerCase();
  // A rootless path after a scheme is opaque (mailto:x): no host, no path.
  if (!rest.startsWith('/') && scheme !== '') return { scheme, host: '', rawPath: '', rawQuery };
  let host = '';
  if ((scheme !== '' || !rest.startsWith('///')) && rest.startsWith('//')) {
    const slash = rest.indexOf('/', 2);
    const authority = slash < 0 ? rest.slice(2) : rest.slice(2, slash);
    const err = authorityError(authority);
    if (err) return fail(err);
    host = unescape(authority.slice(authority.lastIndexOf('@') + 1));
    rest = slash < 0 ? '' : rest.slice(slash);
  }
  const err = unescapeError(rest, false) ?? (hash < 0 ? undefined : unescapeError(s.slice(hash + 1), false));
  if (err) return fail(err);
  return { scheme, host, rawPath: rest, rawQuery };
}
