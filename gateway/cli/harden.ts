// Defence in depth against prototype pollution (issue 18): code that walks a
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

/** What one run of hardenIntrinsics did; the CLI logs nothing, tests read it. */
export interface Hardened { readonly frozen: number; readonly tamed: number }

let done: Hardened | undefined;

const FROZEN: readonly object[] = [
  Object, Object.prototype, Array, Array.prototype, Function, Function.prototype,
  String, String.prototype, Number, Number.prototype, Boolean, Boolean.prototype,
  Symbol, Symbol.prototype, BigInt, BigInt.prototype, RegExp, RegExp.prototype, Date, Date.prototype,
  Error, Error.prototype, TypeError, TypeError.prototype, RangeError, RangeError.prototype, SyntaxError, SyntaxError.prototype,
  Map, Map.prototype, Set, Set.prototype, Promise, Promise.prototype,
];

/** Error subclasses set `name`/`message` on instances; libraries set `toString`/`constructor` on their prototypes. */
const OVERRIDABLE: ReadonlyArray<readonly [object, readonly string[]]> = [
  [Object.prototype, Object.getOwnPropertyNames(Object.prototype)],
  [Function.prototype, ['constructor', 'toString', 'name']],
  [Error.prototype, ['constructor', 'name', 'message', 'toString']],
  [TypeError.prototype, ['constructor', 'name', 'message']],
  [RangeError.prototype, ['constructor', 'name', 'message']],
  [SyntaxError.prototype, ['constructor', 'name', 'message']],
  [Array.prototype, ['constructor', 'toString']],
  [Promise.prototype, ['constructor']],
  [Map.prototype, ['constructor']],
  [Set.prototype, ['constructor']],
  [Date.prototype, ['constructor', 'toString', 'toJSON']],
  [RegExp.prototype, ['constructor', 'toString']],
];

function tame(proto: object, name: string): boolean {
  const d = Object.getOwnPropertyDescriptor(proto, name);
  if (!d || !('value' in d) || !d.configurable) return false;
  const value: unknown = d.value;
  Object.defineProperty(proto, name, {
    get() { return value; },
    set(this: object, v: unknown) {
      if (this === proto) throw new TypeError(`Cannot assign to read only property '${name}' of a frozen prototype`);
      Object.defineProperty(this, name, { value: v, writable: true, enumerable: true, configurable: true });
    },
    enumerable: d.enumerable,
    configurable: false,
  });
  return true;
}

/** Removes `Object.prototype.__proto__` and freezes the intrinsics above; idempotent. */
export function hardenIntrinsics(): Hardened {
  if (done) return done;
  delete (Object.prototype as { __proto__?: unknown }).__proto__;
  let tamed = 0;
  for (const [proto, names] of OVERRIDABLE) for (const n of names) if (tame(proto, n)) tamed++;
  for (const o of FROZEN) Object.freeze(o);
  done = Object.freeze({ frozen: FROZEN.length, tamed });
  return done;
}
