// Defence in depth against prototype pollution: code that walks a
// client's data reads and writes own properties only (lib/api/own.ts); should
// a path be missed, the process must throw instead of changing every object.
// Done once the dependencies are loaded, before the first request:
//   - the `__proto__` accessor goes, as `node --disable-proto=delete` does, so
//     `obj['__proto__'] = v` makes an own property and `x['__proto__']` reads
//     only one;
//   - the prototypes and constructors a JSON value reaches by property names
//     alone (`constructor`, `constructor.prototype`, `constructor.constructor`
//     …) are frozen, so a write through them throws.
// Freezing alone would break ordinary code: assigning `obj.toString = f` or
// `err.name = 'X'` on an object that inherits a frozen data property throws
// (the "override mistake"). Those inherited methods become accessors whose
// setter defines the property on the object assigned to, as SES does.
//
// Not Object.freeze itself: on Object.prototype or Array.prototype it turns
// their (empty) element stores into dictionaries, which switches off V8's fast
// array paths for the whole process (measured: 2× the CPU of a JSON-and-arrays
// loop, 1.12-1.56× per create through the server). preventExtensions plus
// non-writable, non-configurable members is the same lock without that cost:
// hardened, a create costs 2.76M instructions against 2.84M unhardened
// (bench/cg-creates.mjs under callgrind, 400 creates; no visible cost).
// Members V8 guards with a "protector" (Array.prototype.constructor,
// Promise.prototype.then, the Symbol.iterator methods, …) are left as they
// are: redefining one, even to the same value, switches its fast path off.
// They stay writable, but a JSON key cannot name a symbol, and the
// constructors they name are locked themselves.

/** What one run of hardenIntrinsics did; the CLI logs nothing, tests read it. */
export interface Hardened {
  readonly frozen: number;
  readonly tamed: number;
}

let done: Hardened | undefined;

const FROZEN: readonly object[] = [
  Object,
  Object.prototype,
  Array,
  Array.prototype,
  Function,
  Function.prototype,
  String,
  String.prototype,
  Number,
  Number.prototype,
  Boolean,
  Boolean.prototype,
  Symbol,
  Symbol.prototype,
  BigInt,
  BigInt.prototype,
  RegExp,
  RegExp.prototype,
  Date,
  Date.prototype,
  // Not the Error constructors: libraries set Error.stackTraceLimit and Error.prepareStackTrace at
  // run time (redis-errors does on every reply error), and no JSON value reaches them by name.
  Error.prototype,
  TypeError.prototype,
  RangeError.prototype,
  SyntaxError.prototype,
  Map,
  Map.prototype,
  Set,
  Set.prototype,
  Promise,
  Promise.prototype,
];

/** Error subclasses set `name`/`message` on instances; libraries set `toString`/`constructor` on their prototypes. */
const OVERRIDABLE: ReadonlyArray<readonly [object, readonly string[]]> = [
  [Object.prototype, Object.getOwnPropertyNames(Object.prototype)],
  [Function.prototype, ['constructor', 'toString', 'name']],
  [Error.prototype, ['constructor', 'name', 'message', 'toString']],
  [TypeError.prototype, ['constructor', 'name', 'message']],
  [RangeError.prototype, ['constructor', 'name', 'message']],
  [SyntaxError.prototype, ['constructor', 'name', 'message']],
  [Array.prototype, ['toString']],
  [Map.prototype, ['constructor']],
  [Set.prototype, ['constructor']],
  [Date.prototype, ['constructor', 'toString', 'toJSON']],
];

/** Names whose redefinition switches a V8 fast path off for the process (protectors). */
const PROTECTED: ReadonlyMap<object, ReadonlySet<PropertyKey>> = new Map<object, ReadonlySet<PropertyKey>>([
  [Array.prototype, new Set(['constructor', 'concat'])],
  [Array, new Set(['prototype'])],
  [Promise.prototype, new Set(['constructor', 'then'])],
  [Promise, new Set(['resolve', 'prototype'])],
  // Every member: V8 takes a RegExp's fast path only while its prototype's members keep their
  // initial attributes, and Node checks each header with RegExp.prototype.test; locked, a short test
  // cost 51–70 ns against 23–26 (docs/decisions/2026-11-29-regexp-prototype-unlocked.md). No JSON
  // value reaches RegExp.prototype by property names; preventExtensions still refuses new members.
  [RegExp.prototype, new Set(Reflect.ownKeys(RegExp.prototype))],
  [String.prototype, new Set(['replace', 'split', 'match', 'matchAll', 'search'])],
]);

/** Object.freeze's effect on `o`'s string-named members, without Object.freeze (see above). */
function lock(o: object): void {
  Object.preventExtensions(o);
  const skip = PROTECTED.get(o);
  for (const name of Object.getOwnPropertyNames(o)) {
    if (skip?.has(name)) continue;
    const d = Object.getOwnPropertyDescriptor(o, name)!;
    if (!d.configurable && !d.writable) continue;
    Object.defineProperty(o, name, 'value' in d ? { writable: false, configurable: false } : { configurable: false });
  }
}

function tame(proto: object, name: string): boolean {
  const d = Object.getOwnPropertyDescriptor(proto, name);
  if (!d || !('value' in d) || !d.configurable) return false;
  const value: unknown = d.value;
  Object.defineProperty(proto, name, {
    get() {
      return value;
    },
    set(this: object, v: unknown) {
      if (this === proto) throw new TypeError(`Cannot assign to read only property '${name}' of a frozen prototype`);
      Object.defineProperty(this, name, { value: v, writable: true, enumerable: true, configurable: true });
    },
    enumerable: d.enumerable,
    configurable: false,
  });
  return true;
}

/**
 * Locking changes members' attributes, and V8 then turns an intrinsic into a dictionary (a prototype's map has no
 * back pointer to reconfigure along): after hardenIntrinsics Array.prototype, Map.prototype, Set.prototype,
 * Promise.prototype and others were in dictionary mode, and optimized code loaded their methods through generic
 * LoadIC calls (parseRequestInfo: 780–835 ns a call hardened against 450–500 unhardened). Installed as a
 * function's prototype and read through once, V8 makes an object fast again: the same members and attributes.
 * String.prototype and most constructors stay dictionaries (docs/decisions/2026-11-30-get-cpu-cuts-4.md).
 */
function refast(o: object): void {
  function F(): void {}
  F.prototype = o;
  const r = Reflect.construct(F, []) as Record<string, unknown>;
  for (let i = 0; i < 3; i++) void r['__refast__'];
}

/** Removes `Object.prototype.__proto__` and locks the intrinsics above; idempotent. */
export function hardenIntrinsics(): Hardened {
  if (done) return done;
  delete (Object.prototype as { __proto__?: unknown }).__proto__;
  let tamed = 0;
  for (const [proto, names] of OVERRIDABLE) for (const n of names) if (tame(proto, n)) tamed++;
  for (const o of FROZEN) lock(o);
  for (const o of FROZEN) refast(o);
  done = Object.freeze({ frozen: FROZEN.length, tamed });
  return done;
}
