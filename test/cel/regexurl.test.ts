// The Kubernetes regex and URL CEL libraries (lib/cel/regex.ts, urls.ts):
// each function with the answer kube-apiserver's CEL gives (Go's regexp and
// net/url), the errors in kube's words, the checker's types and the runtime
// cost as kube's library/cost.go charges it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CelEnvironment, CelScalar, constantPatternError, isCelMap } from '../../lib/cel/index.js';
import { STRING } from '../../lib/cel/types.js';

const env = new CelEnvironment('regexurl-test', { s: CelScalar.DYN });
const run = (e: string, s: unknown = '') => env.compile(e).evaluate({ s: s as string });
const list = (v: unknown) => [...(v as Iterable<unknown>)];
const message = (e: string, s: unknown = ''): string => {
  try {
    run(e, s);
  } catch (err) {
    return (err as Error).message;
  }
  assert.fail(`${e} did not fail`);
};
const cost = (e: string, s: string) => {
  const stats = { cost: 0 };
  env.compile(e).evaluate({ s }, undefined, stats);
  return stats.cost;
};

describe('regex library: find, findAll', () => {
  it('find gives the leftmost match, empty when none', () => {
    assert.equal(run("s.find('[0-9]+')", 'abc 123 def 456'), '123');
    assert.equal(run("s.find('[0-9]+')", 'abc'), '');
    assert.equal(run("s.find('^v(\\\\d+)\\\\.(\\\\d+)')", 'v1.22-rc'), 'v1.22');
    // RE2 semantics: leftmost-first alternation, no backreferences needed.
    assert.equal(run("s.find('a|ab')", 'ab'), 'a');
    assert.equal(run("s.find('b*')", 'abc'), '');
  });

  it('findAll gives every non-overlapping match; a limit keeps the first n, 0 none, a negative one all', () => {
    assert.deepEqual(list(run("s.findAll('[0-9]+')", 'abc 123 def 456 7')), ['123', '456', '7']);
    assert.deepEqual(list(run("s.findAll('[0-9]+', 2)", 'abc 123 def 456 7')), ['123', '456']);
    assert.deepEqual(list(run("s.findAll('[0-9]+', 0)", 'abc 123 def 456 7')), []);
    assert.deepEqual(list(run("s.findAll('[0-9]+', -1)", 'abc 123 def 456 7')), ['123', '456', '7']);
    assert.deepEqual(list(run("s.findAll('[0-9]+', -7)", 'abc 123')), ['123']);
    assert.deepEqual(list(run("s.findAll('[0-9]+', 10)", 'abc 123')), ['123']);
    assert.deepEqual(list(run("s.findAll('x')", 'abc')), []);
    assert.equal(run("s.findAll('[a-z]+').size() == 2", 'ab 1 cd'), true);
  });

  it("findAll skips an empty match right after a match and steps over whole code points (Go's FindAllString)", () => {
    assert.deepEqual(list(run("s.findAll('a*')", 'baaa')), ['', 'aaa']);
    assert.deepEqual(list(run("s.findAll('a*')", 'baaab')), ['', 'aaa', '']);
    assert.deepEqual(list(run("s.findAll('')", 'abc')), ['', '', '', '']);
    assert.deepEqual(list(run("s.findAll('')", 'x😀y')), ['', '', '', '']);
    assert.deepEqual(list(run("s.findAll('.')", 'x😀y')), ['x', '😀', 'y']);
    // Anchors see the whole string, not the rest after the previous match.
    assert.deepEqual(list(run("s.findAll('^a')", 'aaa')), ['a']);
  });

  it("fails on an invalid pattern with kube's message (Go's regexp error)", () => {
    assert.equal(
      message("s.find('(a')", 'abc'),
      'evaluation of expression "s.find(\'(a\')" failed: Illegal regex: error parsing regexp: missing closing ): `(a`',
    );
    assert.match(message("s.findAll('a**')", 'abc'), /failed: Illegal regex: error parsing regexp: invalid nested repetition operator: `\*\*`$/);
    assert.match(message("s.findAll('[z-a]', 1)", 'abc'), /failed: Illegal regex: error parsing regexp: invalid character class range: `z-a`$/);
    // RE2 has no backreferences, as Go's regexp.
    assert.match(message("s.find('(a)\\\\1')", 'aa'), /failed: Illegal regex: error parsing regexp: invalid escape sequence: `\\1`$/);
    // kube compiles the pattern before matching: an empty string or a limit of 0 fails too.
    assert.match(message("s.find('(')", ''), /Illegal regex/);
    assert.match(message("s.findAll('(', 0)", 'abc'), /Illegal regex/);
    assert.match(message('s.find(1)', 'abc'), /failed: found no matching overload for 'find' applied to 'string\.\(int\)'$/);
  });

  it('finds a constant pattern that does not compile before evaluation (kube refuses it when it builds the program)', () => {
    const bad = (e: string) => constantPatternError(env.compile(e).parsed);
    assert.equal(bad("s.find('(a') == ''"), 'error parsing regexp: missing closing ): `(a`');
    assert.equal(bad("[1].all(x, s.findAll('a**', x).size() == 0)"), 'error parsing regexp: invalid nested repetition operator: `**`');
    assert.equal(bad("s.find('[a-z]+') == '' && s.findAll('x').size() == 0"), undefined);
    // Only constants: a pattern from data fails per evaluation; `matches` is not optimised by kube.
    assert.equal(bad("s.find(s + '(') == ''"), undefined);
    assert.equal(bad("s.matches('(')"), undefined);
  });

  it('stays linear on a pattern that backtracks exponentially in a backtracking engine', () => {
    const s = `${'a'.repeat(5000)}!`;
    assert.equal(run("s.find('(a+)+$')", s), '');
    assert.equal(list(run("s.findAll('(a|aa)+b')", s)).length, 0);
  });

  it("lets the evaluation's wall-clock bound stop a findAll with very many matches", () => {
    // A clock that advances 1 ms each time the meter reads it (every 1,024 charges).
    let now = 0;
    const slow = new CelEnvironment('regexurl-clock', { s: CelScalar.DYN }, { clock: () => now++, limits: { timeoutMs: 5 } });
    const e = slow.compile("s.findAll('.').size()");
    assert.equal(e.evaluate({ s: 'x'.repeat(1000) }), 1000n);
    now = 0;
    assert.throws(
      () => e.evaluate({ s: 'x'.repeat(100_000) }),
      (err: Error & { code?: string }) => {
        assert.equal(err.code, 'cost');
        assert.match(err.message, /timeout: evaluation took longer than 5ms/);
        return true;
      },
    );
  });

  it('type-checks: string receivers, a string pattern, an int limit', () => {
    const vars = new Map([['s', STRING]]);
    assert.equal(env.compile("s.find('a') == 'a'").check(vars).problem, undefined);
    assert.equal(env.compile("s.findAll('a', 2).size() > 0 && s.findAll('a')[0] == 'a'").check(vars).problem, undefined);
    assert.equal(
      env.compile("s.findAll('a', 'b')").check(vars).problem,
      "ERROR: <input>:1:10: found no matching overload for 'findAll' applied to 'string.(string, string)'\n | s.findAll('a', 'b')\n | .........^",
    );
    assert.match(env.compile('s.find(1)').check(vars).problem ?? '', /found no matching overload for 'find' applied to 'string\.\(int\)'/);
    assert.match(env.compile("s.find('a') == 1").check(vars).problem ?? '', /found no matching overload for '_==_' applied to '\(string, int\)'/);
    assert.match(env.compile("s.findAll('a') == 'a'").check(vars).problem ?? '', /applied to '\(list\(string\), string\)'/);
  });

  it('charges as kube does: ⌈0.1 × (1 + |string|)⌉ × ⌈0.25 × |pattern|⌉, as matches', () => {
    const s = 'a'.repeat(99);
    // s 1; the call ⌈0.1 × 100⌉ × ⌈0.25 × 6⌉ = 10 × 2.
    assert.equal(cost("s.find('[a-z]+')", s), 1 + 10 * 2);
    assert.equal(cost("s.findAll('[a-z]+')", s), 1 + 10 * 2);
    assert.equal(cost("s.findAll('[a-z]+', 1)", s), 1 + 10 * 2);
    assert.equal(cost("s.findAll('[a-z]+', 1)", s), cost("s.matches('[a-z]+')", s));
    assert.equal(cost("s.find('')", ''), 1);
  });
});

describe('URL library: url() and its getters', () => {
  it('url() accepts what isURL accepts and gives its parts as Go reads them', () => {
    const u = "url('https://user@Example.com:8443/a/b?x=1&x=2&y=a+b%21#frag')";
    assert.equal(run(`${u}.getScheme()`), 'https');
    assert.equal(run(`${u}.getHost()`), 'Example.com:8443');
    assert.equal(run(`${u}.getHostname()`), 'Example.com');
    assert.equal(run(`${u}.getPort()`), '8443');
    assert.equal(run(`${u}.getEscapedPath()`), '/a/b');
    const q = run(`${u}.getQuery()`);
    assert.ok(isCelMap(q));
    assert.deepEqual(list(q.get('x')), ['1', '2']);
    assert.deepEqual(list(q.get('y')), ['a b!']);
    assert.equal(q.size, 2);
    assert.equal(run("url('HTTPS://a.example').getScheme()"), 'https');
    assert.equal(run("url('https://a.example').getPort()"), '');
    assert.equal(run("url('https://a.example').getEscapedPath()"), '');
    assert.equal(run("url('https://a.example:/x').getPort()"), '');
    assert.equal(run("url('https://a.example:/x').getHostname()"), 'a.example');
  });

  it('IPv6 hosts: brackets in getHost, not in getHostname; a zone is unescaped', () => {
    assert.equal(run("url('https://[::1]:80/').getHost()"), '[::1]:80');
    assert.equal(run("url('https://[::1]:80/').getHostname()"), '::1');
    assert.equal(run("url('https://[::1]:80/').getPort()"), '80');
    assert.equal(run("url('https://[::1]/').getHostname()"), '::1');
    assert.equal(run("url('https://[fe80::1%25en0]:8080/').getHost()"), '[fe80::1%en0]:8080');
    assert.equal(run("url('https://[fe80::1%25en0]:8080/').getHostname()"), 'fe80::1%en0');
  });

  it('paths: kept as written when validly escaped, else escaped as Go does', () => {
    assert.equal(run("url('https://a.example/a%2Fb').getEscapedPath()"), '/a%2Fb');
    assert.equal(run("url('https://a.example/a b/%41').getEscapedPath()"), '/a%20b/A');
    assert.equal(run("url('https://a.example/é').getEscapedPath()"), '/%C3%A9');
    assert.equal(run("url('/absolute/path?q=1').getEscapedPath()"), '/absolute/path');
    assert.equal(run("url('/absolute/path?q=1').getHost()"), '');
    assert.equal(run("url('/absolute/path?q=1').getScheme()"), '');
    assert.equal(run("url('*').getEscapedPath()"), '*');
    // A rootless path after a scheme is opaque: no host, no path.
    assert.equal(run("url('mailto:someone@a.example').getEscapedPath()"), '');
    assert.equal(run("url('mailto:someone@a.example').getHost()"), '');
    // url.Parse reads `//host` as an authority where ParseRequestURI kept a path.
    assert.equal(run("url('//host.example/p').getHost()"), 'host.example');
    assert.equal(run("url('//host.example/p').getEscapedPath()"), '/p');
  });

  it('getQuery: every value of a key in order, `+` a space; pairs with `;` or a bad escape dropped; a `__proto__` key is data', () => {
    const q = run("url('https://a.example/?a=1&b&a=2&c=%zz&d=x;y&e=%41+B&__proto__=p&=v').getQuery()");
    assert.ok(isCelMap(q));
    assert.deepEqual([...q.keys()].sort(), ['', '__proto__', 'a', 'b', 'e']);
    assert.deepEqual(list(q.get('a')), ['1', '2']);
    assert.deepEqual(list(q.get('b')), ['']);
    assert.deepEqual(list(q.get('e')), ['A B']);
    assert.deepEqual(list(q.get('__proto__')), ['p']);
    assert.equal(run("url('https://a.example/').getQuery().size()"), 0n);
    assert.equal(run("'a' in url('https://a.example/?a=1').getQuery() && url('https://a.example/?a=1').getQuery()['a'][0] == '1'"), true);
  });

  it('compares URLs by their string (the scheme case aside)', () => {
    assert.equal(run("url('https://a.example/x') == url('https://a.example/x')"), true);
    assert.equal(run("url('HTTPS://a.example/x') == url('https://a.example/x')"), true);
    assert.equal(run("url('https://a.example/x') == url('https://a.example/y')"), false);
  });

  it("fails on a string that is not a URL with kube's message (Go's parse error)", () => {
    const err = (s: string) => message('url(s)', s).replace(/^evaluation of expression "url\(s\)" failed: /, '');
    assert.equal(err('not a url'), 'URL parse error during conversion from string: parse "not a url": invalid URI for request');
    assert.equal(err(''), 'URL parse error during conversion from string: parse "": empty url');
    assert.equal(err('a.example/x'), 'URL parse error during conversion from string: parse "a.example/x": invalid URI for request');
    assert.equal(err('https://a b/'), 'URL parse error during conversion from string: parse "https://a b/": invalid character " " in host name');
    assert.equal(
      err('https://a.example:80a/'),
      'URL parse error during conversion from string: parse "https://a.example:80a/": invalid port ":80a" after host',
    );
    assert.equal(err('https://a.example/%zz'), 'URL parse error during conversion from string: parse "https://a.example/%zz": invalid URL escape "%zz"');
    assert.equal(err(':x'), 'URL parse error during conversion from string: parse ":x": missing protocol scheme');
    // Accepted by ParseRequestURI, refused by url.Parse, which kube calls next.
    assert.equal(err('//a b/'), 'URL parse error during conversion from string: parse "//a b/": invalid character " " in host name');
    assert.equal(err('https://a.example/?q#%zz'), 'URL parse error during conversion from string: parse "https://a.example/?q#%zz": invalid URL escape "%zz"');
    assert.match(message('url(s).getHost()', 'x'), /invalid URI for request/);
    // A getter on a value that is not a URL.
    assert.match(message("'https://a.example'.getHost()"), /failed: no such overload: not a URL$/);
    assert.match(message('s.getScheme()', new Map([['a', 1n]])), /failed: no such overload: not a URL$/);
  });

  it("isURL is Go's ParseRequestURI: absolute URLs and absolute paths", () => {
    for (const ok of ['https://a.example/x', '/x/y', 'mailto:x', 'urn:isbn:1', '*', '//a b']) assert.equal(run('isURL(s)', ok), true, ok);
    for (const bad of ['', 'x/y', 'not a url', 'https://a b', 'https://a.example:x/', '/%zz', ':x']) assert.equal(run('isURL(s)', bad), false, bad);
  });

  it('type-checks: url() is a kubernetes.URL, the getters strings, getQuery a map of string lists', () => {
    const vars = new Map([['s', STRING]]);
    assert.equal(env.compile("url(s).getHost() == 'a' && url(s).getQuery()['a'][0] == 'b'").check(vars).problem, undefined);
    assert.equal(env.compile('url(s)').check(vars).type.kind, 'opaque');
    assert.equal(env.compile('url(1)').check(vars).problem, "ERROR: <input>:1:4: found no matching overload for 'url' applied to '(int)'\n | url(1)\n | ...^");
    assert.match(env.compile('url(s).getScheme() == 1').check(vars).problem ?? '', /applied to '\(string, int\)'/);
    assert.match(env.compile("url(s).getQuery() == 'a'").check(vars).problem ?? '', /applied to '\(map\(string, list\(string\)\), string\)'/);
    assert.match(env.compile('s.getHost()').check(vars).problem ?? '', /found no matching overload for 'getHost' applied to 'string\.\(\)'/);
  });

  it('charges as kube does: url() 0.1 per character, each getter 1', () => {
    const s = `https://a.example/${'p'.repeat(81)}`; // 99 characters
    // s 1; url ⌈0.1 × 99⌉ = 10; a getter 1.
    assert.equal(cost('url(s)', s), 1 + 10);
    for (const g of ['getScheme', 'getHost', 'getHostname', 'getPort', 'getEscapedPath', 'getQuery']) assert.equal(cost(`url(s).${g}()`, s), 1 + 10 + 1, g);
    assert.equal(cost('isURL(s)', s), 2);
  });
});
