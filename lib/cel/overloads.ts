// The overloads the checker (check.ts) knows: CEL's standard functions and
// operators, the strings extension, and the Kubernetes libraries of this
// folder, typed as cel-go declares them (kube's environment, with
// cross-type numeric comparisons). A function evaluated here but not listed
// (`strings.quote`, timestamp accessors with a time zone, …) is not checked:
// its arguments are, its result is dyn. Optional values (optional.ts) are
// `optional_type(T)`, as cel-go names them.
import { parseType, type CelT } from './types.js';

export interface Overload {
  readonly name: string;
  /** The receiver of a method (`'a'.startsWith(…)`); undefined for a global function. */
  readonly target?: CelT;
  readonly args: readonly CelT[];
  readonly result: CelT;
}

/** Splits `int, map(K, V)` at its top-level commas. */
function splitArgs(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '(') depth++;
    else if (s[i] === ')') depth--;
    else if (s[i] === ',' && depth === 0) {
      out.push(s.slice(start, i));
      start = i + 1;
    }
  }
  if (s.trim()) out.push(s.slice(start));
  return out;
}

const table = new Map<string, Overload[]>();

/** `fn('_+_', 'int, int', 'int')`; `method('string', 'contains', 'string', 'bool')`. */
function add(target: string | undefined, names: string | readonly string[], args: string, result: string): void {
  for (const name of typeof names === 'string' ? [names] : names) {
    const o: Overload = { name, target: target === undefined ? undefined : parseType(target), args: splitArgs(args).map(parseType), result: parseType(result) };
    const list = table.get(name);
    if (list) list.push(o);
    else table.set(name, [o]);
  }
}
const fn = (names: string | readonly string[], args: string, result: string) => add(undefined, names, args, result);
const method = (target: string, names: string | readonly string[], args: string, result: string) => add(target, names, args, result);

// ---- operators --------------------------------------------------------------
for (const t of ['int', 'uint', 'double']) for (const op of ['_+_', '_-_', '_*_', '_/_']) fn(op, `${t}, ${t}`, t);
for (const t of ['int', 'uint']) fn('_%_', `${t}, ${t}`, t);
fn('_+_', 'string, string', 'string');
fn('_+_', 'bytes, bytes', 'bytes');
fn('_+_', 'list(A), list(A)', 'list(A)');
fn('_+_', 'timestamp, duration', 'timestamp');
fn('_+_', 'duration, timestamp', 'timestamp');
fn('_+_', 'duration, duration', 'duration');
fn('_-_', 'timestamp, timestamp', 'duration');
fn('_-_', 'timestamp, duration', 'timestamp');
fn('_-_', 'duration, duration', 'duration');
fn('-_', 'int', 'int');
fn('-_', 'double', 'double');
fn('!_', 'bool', 'bool');
fn(['_&&_', '_||_'], 'bool, bool', 'bool');
fn('_?_:_', 'bool, A, A', 'A');
fn(['_==_', '_!=_'], 'A, A', 'bool');
const ORDERED = ['bool', 'int', 'uint', 'double', 'string', 'bytes', 'timestamp', 'duration'];
const NUMERIC = ['int', 'uint', 'double'];
for (const op of ['_<_', '_<=_', '_>_', '_>=_']) {
  for (const t of ORDERED) fn(op, `${t}, ${t}`, 'bool');
  for (const a of NUMERIC) for (const b of NUMERIC) if (a !== b) fn(op, `${a}, ${b}`, 'bool');
}
fn('@in', 'A, list(A)', 'bool');
fn('@in', 'A, map(A, B)', 'bool');
fn('_[_]', 'list(A), int', 'A');
fn('_[_]', 'map(K, V), K', 'V');
fn('@not_strictly_false', 'bool', 'bool');

// ---- standard functions -------------------------------------------------------
for (const t of ['string', 'bytes', 'list(A)', 'map(K, V)']) {
  fn('size', t, 'int');
  method(t, 'size', '', 'int');
}
method('string', ['contains', 'startsWith', 'endsWith', 'matches'], 'string', 'bool');
fn('matches', 'string, string', 'bool');
for (const t of ['int', 'uint', 'double', 'string', 'timestamp', 'duration']) fn('int', t, 'int');
for (const t of ['uint', 'int', 'double', 'string']) fn('uint', t, 'uint');
for (const t of ['double', 'int', 'uint', 'string']) fn('double', t, 'double');
for (const t of ['string', 'bool', 'int', 'uint', 'double', 'bytes', 'timestamp', 'duration']) fn('string', t, 'string');
for (const t of ['bytes', 'string']) fn('bytes', t, 'bytes');
for (const t of ['bool', 'string']) fn('bool', t, 'bool');
for (const t of ['duration', 'string']) fn('duration', t, 'duration');
for (const t of ['timestamp', 'string', 'int']) fn('timestamp', t, 'timestamp');
fn('dyn', 'A', 'dyn');
fn('type', 'A', 'type');
const TIME_PARTS = [
  'getFullYear',
  'getMonth',
  'getDayOfYear',
  'getDayOfMonth',
  'getDate',
  'getDayOfWeek',
  'getHours',
  'getMinutes',
  'getSeconds',
  'getMilliseconds',
];
method('timestamp', TIME_PARTS, '', 'int');
method('timestamp', TIME_PARTS, 'string', 'int');
method('duration', ['getHours', 'getMinutes', 'getSeconds', 'getMilliseconds'], '', 'int');

// ---- strings extension (as @bufbuild/cel/ext provides it) ---------------------
method('string', 'charAt', 'int', 'string');
method('string', ['indexOf', 'lastIndexOf'], 'string', 'int');
method('string', ['indexOf', 'lastIndexOf'], 'string, int', 'int');
method('string', ['lowerAscii', 'upperAscii', 'trim'], '', 'string');
method('string', 'replace', 'string, string', 'string');
method('string', 'replace', 'string, string, int', 'string');
method('string', 'split', 'string', 'list(string)');
method('string', 'split', 'string, int', 'list(string)');
method('string', 'substring', 'int', 'string');
method('string', 'substring', 'int, int', 'string');
method('string', 'format', 'list(dyn)', 'string');
method('list(string)', 'join', '', 'string');
method('list(string)', 'join', 'string', 'string');

// ---- Kubernetes libraries (lists.ts, urls.ts, regex.ts, quantity.ts, net.ts, format.ts) ----
method('list(A)', ['indexOf', 'lastIndexOf'], 'A', 'int');
method('list(A)', ['min', 'max', 'sum'], '', 'A');
method('list(A)', 'isSorted', '', 'bool');
fn('isURL', 'string', 'bool');
const U = 'kubernetes.URL';
fn('url', 'string', U);
method(U, ['getScheme', 'getHost', 'getHostname', 'getPort', 'getEscapedPath'], '', 'string');
method(U, 'getQuery', '', 'map(string, list(string))');
// regex.ts
method('string', 'find', 'string', 'string');
method('string', 'findAll', 'string', 'list(string)');
method('string', 'findAll', 'string, int', 'list(string)');
const Q = 'kubernetes.Quantity';
fn('quantity', 'string', Q);
fn('isQuantity', 'string', 'bool');
method(Q, 'isInteger', '', 'bool');
method(Q, 'asInteger', '', 'int');
method(Q, 'asApproximateFloat', '', 'double');
method(Q, 'sign', '', 'int');
method(Q, ['add', 'sub'], Q, Q);
method(Q, ['add', 'sub'], 'int', Q);
method(Q, ['isLessThan', 'isGreaterThan'], Q, 'bool');
method(Q, 'compareTo', Q, 'int');
fn('ip', 'string', 'net.IP');
fn(['isIP', 'isCIDR'], 'string', 'bool');
method('net.IP', 'family', '', 'int');
method('net.IP', ['isUnspecified', 'isLoopback', 'isLinkLocalMulticast', 'isLinkLocalUnicast', 'isGlobalUnicast'], '', 'bool');
fn('cidr', 'string', 'net.CIDR');
method('net.CIDR', 'containsIP', 'net.IP', 'bool');
method('net.CIDR', 'containsIP', 'string', 'bool');
method('net.CIDR', 'containsCIDR', 'net.CIDR', 'bool');
method('net.CIDR', 'containsCIDR', 'string', 'bool');
method('net.CIDR', 'ip', '', 'net.IP');
method('net.CIDR', 'masked', '', 'net.CIDR');
method('net.CIDR', 'prefixLength', '', 'int');

// format.ts: a format, and optional results (optional.ts: an absent optional, or the value).
const F = 'kubernetes.NamedFormat';
fn('format.named', 'string', `optional_type(${F})`);
fn(
  [
    'dns1123Label',
    'dns1123Subdomain',
    'dns1035Label',
    'qualifiedName',
    'dns1123LabelPrefix',
    'dns1123SubdomainPrefix',
    'dns1035LabelPrefix',
    'labelValue',
    'uri',
    'uuid',
    'byte',
    'date',
    'datetime',
  ].map((n) => `format.${n}`),
  '',
  F,
);
method(F, 'validate', 'string', 'optional_type(list(string))');
method('optional_type(A)', 'hasValue', '', 'bool');
method('optional_type(A)', 'value', '', 'A');
method('optional_type(A)', 'orValue', 'A', 'A');
method('optional_type(A)', 'or', 'optional_type(A)', 'optional_type(A)');
// optionalsyntax.ts: cel-go's optional library (`optional.of(x)`, `optional.none()`, `optional.ofNonZeroValue(x)`).
fn(['optional.of', 'optional.ofNonZeroValue'], 'A', 'optional_type(A)');
fn('optional.none', '', 'optional_type(dyn)');

// authz.ts: the authorizer library (kube's authz and authzSelectors libraries).
const AZ = 'kubernetes.authorization';
method(`${AZ}.Authorizer`, 'path', 'string', `${AZ}.PathCheck`);
method(`${AZ}.Authorizer`, 'group', 'string', `${AZ}.GroupCheck`);
method(`${AZ}.Authorizer`, 'serviceAccount', 'string, string', `${AZ}.Authorizer`);
method(`${AZ}.GroupCheck`, 'resource', 'string', `${AZ}.ResourceCheck`);
method(`${AZ}.ResourceCheck`, ['subresource', 'namespace', 'name', 'fieldSelector', 'labelSelector'], 'string', `${AZ}.ResourceCheck`);
method(`${AZ}.PathCheck`, 'check', 'string', `${AZ}.Decision`);
method(`${AZ}.ResourceCheck`, 'check', 'string', `${AZ}.Decision`);
method(`${AZ}.Decision`, ['allowed', 'errored'], '', 'bool');
method(`${AZ}.Decision`, ['reason', 'error'], '', 'string');

/** The declared overloads of a function or method name; undefined = not declared here (not checked). */
export function overloadsOf(name: string): readonly Overload[] | undefined {
  return table.get(name);
}
