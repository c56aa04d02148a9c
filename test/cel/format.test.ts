// The Kubernetes format library (lib/cel/format.ts): each format valid and
// invalid with kube's messages (apimachinery's validators, Go's
// url.ParseRequestURI, kube's strfmt messages), format.named, the optional
// results, the checker's types and the runtime cost.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CelEnvironment, CelScalar, isCelList } from '../../lib/cel/index.js';
import { STRING } from '../../lib/cel/types.js';

const env = new CelEnvironment('format-test', { s: CelScalar.STRING });

/** The errors `format.<name>().validate(s)` gives: [] when none (optional.none). */
function errors(name: string, s: string): string[] {
  const c = env.compile(`format.${name}().validate(s).orValue([])`);
  const v = c.evaluate({ s });
  assert.ok(isCelList(v), `not a list: ${String(v)}`);
  return [...v].map(String);
}

const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const QNAME_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

const CASES: Array<[format: string, value: string, want: string[]]> = [
  ['dns1123Label', 'my-name', []],
  ['dns1123Label', 'My_Name', [LABEL_MSG]],
  ['dns1123Label', 'a'.repeat(64), ['must be no more than 63 characters']],
  ['dns1123Label', 'abc-', [LABEL_MSG]],
  ['dns1123Subdomain', 'apiextensions.k8s.io', []],
  ['dns1123Subdomain', 'Example.com', [SUBDOMAIN_MSG]],
  ['dns1035Label', 'my-name', []],
  ['dns1035Label', '1abc', [DNS1035_MSG]],
  ['qualifiedName', 'apiextensions.k8s.io/v1beta1', []],
  ['qualifiedName', 'example.com/-bad', [QNAME_MSG]],
  ['qualifiedName', 'Bad_/x', [`prefix part ${SUBDOMAIN_MSG}`]],
  // A prefix gets characters appended: a trailing dash is masked as kube masks it.
  ['dns1123LabelPrefix', 'my-label-prefix-', []],
  ['dns1123LabelPrefix', '-', [LABEL_MSG]],
  ['dns1123SubdomainPrefix', 'mysubdomain.prefix.-', []],
  ['dns1035LabelPrefix', 'my-label-prefix-', []],
  ['dns1035LabelPrefix', '1ab-', [DNS1035_MSG]],
  // kube's mask drops the character before the dash too ("a_-" is checked as "aa").
  ['dns1123LabelPrefix', 'a_-', []],
  ['labelValue', '', []],
  ['labelValue', 'my_value', []],
  ['labelValue', 'bad value', [LABEL_VALUE_MSG]],
  ['uri', 'http://example.com/path?q=1', []],
  ['uri', '/absolute/path', []],
  ['uri', 'mailto:someone@example.com', []],
  ['uri', 'example.com', ['parse "example.com": invalid URI for request']],
  ['uri', '', ['parse "": empty url']],
  ['uri', ':foo', ['parse ":foo": missing protocol scheme']],
  ['uri', 'http://exa mple.com/', ['parse "http://exa mple.com/": invalid character " " in host name']],
  ['uri', 'http://example.com:80a/', ['parse "http://example.com:80a/": invalid port ":80a" after host']],
  ['uri', 'http://[::1/', ['parse "http://[::1/": missing \']\' in host']],
  ['uri', 'http://example.com/%zz', ['parse "http://example.com/%zz": invalid URL escape "%zz"']],
  ['uri', 'http://a\tb/', ['parse "http://a\\tb/": net/url: invalid control character in URL']],
  ['uri', 'http://us er@example.com/', ['parse "http://us er@example.com/": net/url: invalid userinfo']],
  ['uuid', '123e4567-e89b-12d3-a456-426614174000', []],
  ['uuid', '123E4567E89B12D3A456426614174000', []],
  ['uuid', '123e4567-e89b-12d3-a456', ['does not match the UUID format']],
  ['byte', 'aGVsbG8=', []],
  ['byte', 'aGVsbG8', ['invalid base64']],
  ['date', '2021-01-01', []],
  ['date', '2021-02-30', ['invalid date']],
  ['datetime', '2021-01-01T00:00:00Z', []],
  ['datetime', '2021-01-01', ['invalid datetime']],
];

describe('Kubernetes format library', () => {
  for (const [format, value, want] of CASES) {
    it(`format.${format}().validate(${JSON.stringify(value)})`, () => assert.deepEqual(errors(format, value), want));
  }

  it('gives optional.none when valid and the list of messages when not', () => {
    assert.equal(env.compile('format.dns1123Label().validate(s).hasValue()').evaluate({ s: 'ok' }), false);
    assert.equal(env.compile('format.dns1123Label().validate(s).hasValue()').evaluate({ s: 'NO' }), true);
    assert.equal(env.compile('format.dns1123Label().validate(s).value().size()').evaluate({ s: 'a'.repeat(64) + '_' }), 2n);
    assert.throws(() => env.compile('format.dns1123Label().validate(s).value()').evaluate({ s: 'ok' }), /optional\.none\(\) dereference/);
  });

  it('format.named: a format by name, optional.none for an unknown name', () => {
    assert.equal(env.compile('format.named("dns1123Label").hasValue()').evaluate({ s: '' }), true);
    assert.equal(env.compile('format.named("dns1123Label").value() == format.dns1123Label()').evaluate({ s: '' }), true);
    assert.equal(env.compile('format.named("dns1123Label").value() == format.labelValue()').evaluate({ s: '' }), false);
    assert.equal(env.compile('format.named(s).value().validate("Bad").hasValue()').evaluate({ s: 'dns1035Label' }), true);
    for (const unknown of ['DNS1123Label', 'email', '', 'ip']) {
      assert.equal(env.compile('format.named(s).hasValue()').evaluate({ s: unknown }), false, unknown);
    }
    assert.equal(env.compile('format.named(s).orValue(format.uuid()) == format.uuid()').evaluate({ s: 'nope' }), true);
  });

  it('type-checks: a format, optional results, and refuses a non-string to validate', () => {
    const vars = new Map([['s', STRING]]);
    assert.equal(env.compile('!format.dns1123Label().validate(s).hasValue()').check(vars).problem, undefined);
    assert.equal(env.compile('format.dns1123Label().validate(s).value().join(", ")').check(vars).problem, undefined);
    assert.equal(env.compile('format.named(s).value().validate(s).orValue([]).size() == 0').check(vars).problem, undefined);
    assert.equal(env.compile('format.named(s)').check(vars).type.kind, 'opaque');
    assert.equal(
      env.compile('format.dns1123Label().validate(1)').check(vars).problem,
      "ERROR: <input>:1:31: found no matching overload for 'validate' applied to 'kubernetes.NamedFormat.(int)'\n | format.dns1123Label().validate(1)\n | ..............................^",
    );
    assert.match(env.compile('format.named(1)').check(vars).problem ?? '', /found no matching overload for 'format\.named' applied to '\(int\)'/);
    assert.match(
      env.compile('format.uuid().validate(s).value() == "x"').check(vars).problem ?? '',
      /found no matching overload for '_==_' applied to '\(list\(string\), string\)'/,
    );
    assert.match(env.compile('format.uuid().validate(s) == 1').check(vars).problem ?? '', /applied to '\(optional_type\(list\(string\)\), int\)'/);
  });

  it("charges validate as kube does: a matches of the string against the format's regex size", () => {
    const cost = (e: string, s: string) => {
      const stats = { cost: 0 };
      env.compile(e).evaluate({ s }, undefined, stats);
      return stats.cost;
    };
    // format.x() 1 (`format` is no identifier read), s 1, validate ⌈0.1 × (1 + |s|)⌉ × ⌈0.25 × size⌉.
    const s = 'a'.repeat(99);
    assert.equal(cost('format.dns1123Label().validate(s)', s), 2 + 10 * 8);
    assert.equal(cost('format.dns1123Subdomain().validate(s)', s), 2 + 10 * 15);
    assert.equal(cost('format.labelValue().validate(s)', s), 2 + 10 * 10);
    assert.equal(cost('format.uri().validate(s)', s), 2 + 10 * 280);
  });
});
