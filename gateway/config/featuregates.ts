// --feature-gates: `Name=true,Other=false`, kube's syntax, parsed into a
// frozen table of the gates Gatehouse knows. Unknown names are an error (as
// kube-apiserver's "unrecognized feature gate"), so a typo does not silently
// leave a gate at its default.

/** Gatehouse's gates and their defaults (kube 1.33's defaults). */
export const FEATURE_GATE_DEFAULTS = Object.freeze({
  /** Field and label selectors are part of authorization attributes (webhooks receive them). */
  AuthorizeWithSelectors: true,
  /** The Node authorizer limits node reads of nodes and pods (needs AuthorizeWithSelectors). */
  AuthorizeNodeWithSelectors: true,
  /** --authorization-config; GA, locked on. */
  StructuredAuthorizationConfiguration: true,
  /** --authentication-config. */
  StructuredAuthenticationConfiguration: true,
  /** DELETE with ignoreStoreReadErrorWithClusterBreakingPotential=true may remove objects the store cannot decode (alpha). */
  AllowUnsafeMalformedObjectDeletion: false,
  /** application/cbor answers and request bodies, application/cbor-seq watches, apply-patch+cbor (alpha in kube 1.32+); off: 406 and 415. */
  CBORServingAndStorage: false,
});

export type FeatureGate = keyof typeof FEATURE_GATE_DEFAULTS;
export type FeatureGates = Readonly<Record<FeatureGate, boolean>>;

const LOCKED: ReadonlySet<string> = new Set<FeatureGate>(['StructuredAuthorizationConfiguration']);

export class FeatureGateError extends Error {
  constructor(message: string, readonly value: string) { super(message); }
}

const TRUE = ['1', 't', 'T', 'true', 'TRUE', 'True'];
const FALSE = ['0', 'f', 'F', 'false', 'FALSE', 'False'];

/** Parses one --feature-gates value onto `base` (repeats accumulate, later wins). */
export function parseFeatureGates(raw: string, base: FeatureGates = FEATURE_GATE_DEFAULTS): FeatureGates {
  const out: Record<string, boolean> = { ...base };
  for (const part of raw.split(',').map((s) => s.trim()).filter((s) => s !== '')) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new FeatureGateError('missing bool value (Name=true or Name=false)', part);
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (!Object.hasOwn(FEATURE_GATE_DEFAULTS, name)) {
      throw new FeatureGateError(`unrecognized feature gate "${name}" (known: ${Object.keys(FEATURE_GATE_DEFAULTS).join(', ')})`, part);
    }
    let on: boolean;
    if (TRUE.includes(value)) on = true;
    else if (FALSE.includes(value)) on = false;
    else throw new FeatureGateError(`invalid value of ${name}: ${value}, err: must be true or false`, part);
    if (LOCKED.has(name) && on !== FEATURE_GATE_DEFAULTS[name as FeatureGate]) {
      throw new FeatureGateError(`cannot set feature gate ${name} to ${on}, feature is locked to ${!on}`, part);
    }
    out[name] = on;
  }
  return Object.freeze(out) as FeatureGates;
}
