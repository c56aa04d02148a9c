// A metric's place in its lifecycle (spec resource-api.md "Metric lifecycle",
// kube's component-base/metrics): from its stability level, the release it
// was deprecated in and the release running now. Pure; the registry
// (registry.ts) acts on the answer.
export type StabilityLevel = 'ALPHA' | 'BETA' | 'STABLE';

export interface MetricLifecycle {
  readonly stabilityLevel: StabilityLevel;
  /** `major.minor[.patch]`: the release from which the metric is deprecated. */
  readonly deprecatedVersion?: string;
}

export interface MinorVersion {
  readonly major: number;
  readonly minor: number;
}

/**
 * Releases after its deprecation at which a deprecated metric stops being
 * registered (the spec: hidden when the deprecated version equals the current
 * version minus 3); one release after that it is deleted and no flag brings it back.
 */
export const HIDDEN_AFTER_RELEASES = 3;

export type Phase =
  | { readonly phase: 'current' }
  | { readonly phase: 'deprecated' }
  /** Off the endpoint unless hidden metrics are shown. */
  | { readonly phase: 'hidden' }
  /** Past the escape hatch: never served; the declaration should be removed. */
  | { readonly phase: 'deleted' };

export class VersionError extends Error {}

/** `1.30`, `1.30.0`, `v1.30.2` → 1.30. */
export function parseMinorVersion(raw: string): MinorVersion {
  const m = /^v?(\d{1,4})\.(\d{1,4})(?:\.(\d{1,6}))?$/.exec(raw);
  if (!m) throw new VersionError(`"${raw}" is not a version (major.minor or major.minor.patch)`);
  return { major: Number(m[1]), minor: Number(m[2]) };
}

/** Releases from `from` to `to` (negative when `to` is older); another major counts as far apart. */
function releasesBetween(from: MinorVersion, to: MinorVersion): number {
  if (from.major === to.major) return to.minor - from.minor;
  return to.major > from.major ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY;
}

export function phaseOf(lifecycle: MetricLifecycle, current: MinorVersion): Phase {
  if (lifecycle.deprecatedVersion === undefined) return { phase: 'current' };
  const since = releasesBetween(parseMinorVersion(lifecycle.deprecatedVersion), current);
  if (since < 0) return { phase: 'current' };
  if (since < HIDDEN_AFTER_RELEASES) return { phase: 'deprecated' };
  if (since === HIDDEN_AFTER_RELEASES) return { phase: 'hidden' };
  return { phase: 'deleted' };
}

/** `1.30` / `1.30.0` → `1.30.0`, as kube prints a deprecated version. */
export function fullVersion(raw: string): string {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?$/.exec(raw)!;
  return `${m[1]}.${m[2]}.${m[3] ?? '0'}`;
}

/** HELP as kube writes it: `[ALPHA] (Deprecated since 1.30.0) …` once deprecated. */
export function annotatedHelp(help: string, lifecycle: MetricLifecycle, current: MinorVersion): string {
  const deprecated = phaseOf(lifecycle, current).phase !== 'current';
  return `[${lifecycle.stabilityLevel}] ${deprecated ? `(Deprecated since ${fullVersion(lifecycle.deprecatedVersion!)}) ` : ''}${help}`;
}

/**
 * `--show-hidden-metrics-for-version`: only the previous release is accepted
 * (what that release still served); the message names the flag, as kube's.
 */
export function checkShowHiddenVersion(raw: string, current: MinorVersion): void {
  const previous = `${current.major}.${current.minor - 1}`;
  if (raw !== previous) {
    throw new VersionError(`--show-hidden-metrics-for-version must be omitted or have the value '${previous}'. Only the previous minor version is allowed`);
  }
}
