// --feature-gates: `Name=true,Other=false`, kube's syntax, over one table of
// the gates Gatehouse has, each with its stage and default (kube 1.33's).
// Unknown names and non-boolean values are errors (kube's "unrecognized
// feature gate"), so a typo does not silently leave a gate at its default; a
// locked GA gate cannot be turned off; setting a GA or deprecated gate warns
// at start, as kube-apiserver does. Each gate switches real behaviour.

import { ConfigError } from '../../lib/config/error.js';

export type GateStage = 'ALPHA' | 'BETA' | 'GA' | 'DEPRECATED';

interface GateSpec {
  readonly default: boolean;
  readonly stage: GateStage;
  /** GA and locked to its default: the gate no longer switches anything, and setting it otherwise fails. */
  readonly locked?: true;
  readonly description: string;
}

const gate = (s: GateSpec): GateSpec => Object.freeze(s);

/** Every gate Gatehouse reads, with kube 1.33's stage and default. */
export const FEATURE_GATE_SPECS = Object.freeze({
  APIResponseCompression: gate({ default: true, stage: 'BETA', description: 'GET answers are gzipped when the client accepts it (off: never compressed)' }),
  AuthorizeWithSelectors: gate({
    default: true,
    stage: 'BETA',
    description: 'Field and label selectors are part of authorization attributes (webhooks receive them)',
  }),
  AuthorizeNodeWithSelectors: gate({
    default: true,
    stage: 'BETA',
    description: 'The Node authorizer limits node reads of nodes and pods (needs AuthorizeWithSelectors)',
  }),
  StructuredAuthorizationConfiguration: gate({ default: true, stage: 'GA', locked: true, description: '--authorization-config' }),
  StructuredAuthenticationConfiguration: gate({ default: true, stage: 'BETA', description: '--authentication-config' }),
  AllowUnsafeMalformedObjectDeletion: gate({
    default: false,
    stage: 'ALPHA',
    description: 'DELETE with ignoreStoreReadErrorWithClusterBreakingPotential=true may remove objects the store cannot decode',
  }),
  CBORServingAndStorage: gate({
    default: false,
    stage: 'ALPHA',
    description: 'application/cbor answers and request bodies, application/cbor-seq watches, apply-patch+cbor (off: 406 and 415)',
  }),
});

export type FeatureGate = keyof typeof FEATURE_GATE_SPECS;
export type FeatureGates = Readonly<Record<FeatureGate, boolean>>;

export const FEATURE_GATE_DEFAULTS: FeatureGates = Object.freeze(
  Object.fromEntries(Object.entries(FEATURE_GATE_SPECS).map(([k, s]) => [k, s.default])) as Record<FeatureGate, boolean>,
);

/** The gates a --feature-gates value set by name (for the start-time warnings). */
const explicitlySet = new WeakMap<FeatureGates, readonly FeatureGate[]>();

const TRUE = ['1', 't', 'T', 'true', 'TRUE', 'True'];
const FALSE = ['0', 'f', 'F', 'false', 'FALSE', 'False'];

/** Parses one --feature-gates value onto `base` (repeats accumulate, later wins). */
export function parseFeatureGates(raw: string, base: FeatureGates = FEATURE_GATE_DEFAULTS): FeatureGates {
  const out: Record<string, boolean> = { ...base };
  const set = new Set<FeatureGate>(explicitlySet.get(base) ?? []);
  for (const part of raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw new ConfigError('missing bool value (Name=true or Name=false)', { value: part });
    const name = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (!Object.hasOwn(FEATURE_GATE_SPECS, name)) {
      throw new ConfigError(`unrecognized feature gate "${name}" (known: ${Object.keys(FEATURE_GATE_SPECS).join(', ')})`, { value: part });
    }
    const spec: GateSpec = FEATURE_GATE_SPECS[name as FeatureGate];
    let on: boolean;
    if (TRUE.includes(value)) on = true;
    else if (FALSE.includes(value)) on = false;
    else throw new ConfigError(`invalid value of ${name}: ${value}, err: must be true or false`, { value: part });
    if (spec.locked && on !== spec.default) {
      throw new ConfigError(`cannot set feature gate ${name} to ${on}, feature is locked to ${!on}`, { value: part });
    }
    out[name] = on;
    set.add(name as FeatureGate);
  }
  const gates = Object.freeze(out) as FeatureGates;
  explicitlySet.set(gates, [...set]);
  return gates;
}

/** kube's start-time warnings for gates set explicitly that are GA or deprecated. */
export function featureGateWarnings(gates: FeatureGates): string[] {
  return (explicitlySet.get(gates) ?? []).flatMap((name) => {
    const s: GateSpec = FEATURE_GATE_SPECS[name];
    if (s.stage === 'GA') return [`Setting GA feature gate ${name}=${gates[name]}. It will be removed in a future release.`];
    if (s.stage === 'DEPRECATED') return [`Setting deprecated feature gate ${name}=${gates[name]}. It will be removed in a future release.`];
    return [];
  });
}

/** The gates as --help lists them (kube's form: `Name=true|false (STAGE - default=x)`). */
export function featureGateHelp(): string[] {
  return Object.entries(FEATURE_GATE_SPECS).map(
    ([n, s]: [string, GateSpec]) => `${n}=true|false (${s.stage} - default=${s.default}${s.locked ? ', locked' : ''}): ${s.description}`,
  );
}
