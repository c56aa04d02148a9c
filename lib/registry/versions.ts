// One table of every group/version Gatehouse serves, with its stability and
// lifecycle: --runtime-config enables and disables by it, and a deprecated
// version's answers carry kube's Warning (and the deprecated-API gauge and
// audit annotations). Lifecycle releases are kube's: the review v1beta1
// versions were deprecated in 1.19 and removed from kube-apiserver in 1.22
// (the spec's removed-versions table); Gatehouse still serves them because
// kube-apiserver itself calls token and authorization webhooks in v1beta1 by
// default. SelfSubjectReview v1beta1 (introduced 1.27, v1 in 1.28) carries
// kube's default prerelease lifecycle: deprecated 1.30, removed 1.33.
// access.gatehouse.dev/v1alpha1 (Gatehouse's own access insight) is alpha and,
// as every alpha version, off unless --runtime-config turns it on: its
// answers (who can do what, which rules nearly match) are more than
// kube-apiserver reveals, so an operator opts in to serving them.

export type Stability = 'ga' | 'beta' | 'alpha';

export interface VersionLifecycle {
  readonly group: string;
  readonly version: string;
  readonly stability: Stability;
  /**
   * Per kind (`*` = every kind of the version): when deprecated, when kube removed it, what replaces it
   * (a kind deprecated with neither, as core/v1 ComponentStatus, has only `since`).
   */
  readonly deprecated?: Readonly<Record<string, { since: string; removed?: string; replacement?: string }>>;
}

const ga = (group: string, version = 'v1'): VersionLifecycle => ({ group, version, stability: 'ga' });

export const SERVED_VERSIONS: readonly VersionLifecycle[] = Object.freeze(
  (
    [
      {
        group: '',
        version: 'v1',
        stability: 'ga',
        deprecated: { ComponentStatus: { since: '1.19' } },
      },
      ga('apiregistration.k8s.io'),
      ga('apps'),
      ga('autoscaling', 'v2'),
      ga('autoscaling'),
      ga('batch'),
      ga('policy'),
      ga('networking.k8s.io'),
      ga('scheduling.k8s.io'),
      ga('storage.k8s.io'),
      ga('node.k8s.io'),
      ga('events.k8s.io'),
      ga('authentication.k8s.io'),
      ga('authorization.k8s.io'),
      ga('rbac.authorization.k8s.io'),
      ga('coordination.k8s.io'),
      ga('discovery.k8s.io'),
      ga('flowcontrol.apiserver.k8s.io'),
      ga('certificates.k8s.io'),
      ga('admissionregistration.k8s.io'),
      {
        group: 'authentication.k8s.io',
        version: 'v1beta1',
        stability: 'beta',
        deprecated: {
          TokenReview: { since: '1.19', removed: '1.22', replacement: 'authentication.k8s.io/v1 TokenReview' },
          SelfSubjectReview: { since: '1.30', removed: '1.33', replacement: 'authentication.k8s.io/v1 SelfSubjectReview' },
        },
      },
      {
        group: 'authorization.k8s.io',
        version: 'v1beta1',
        stability: 'beta',
        deprecated: {
          SubjectAccessReview: { since: '1.19', removed: '1.22', replacement: 'authorization.k8s.io/v1 SubjectAccessReview' },
        },
      },
      { group: 'access.gatehouse.dev', version: 'v1alpha1', stability: 'alpha' },
    ] as VersionLifecycle[]
  ).map((v) => Object.freeze(v)),
);

/** group → version → lifecycle: asked on every resource request (dispatch's deprecation check), with no key string joined. */
const BY_GV = new Map<string, Map<string, VersionLifecycle>>();
for (const v of SERVED_VERSIONS) {
  let versions = BY_GV.get(v.group);
  if (!versions) BY_GV.set(v.group, (versions = new Map()));
  versions.set(v.version, v);
}

export function lifecycleOf(group: string, version: string): VersionLifecycle | undefined {
  return BY_GV.get(group)?.get(version);
}

/** kube's deprecation warning for a kind of a deprecated version, or undefined. */
export function deprecation(group: string, version: string, kind: string): { text: string; removed: string } | undefined {
  const d = lifecycleOf(group, version)?.deprecated;
  const e = d && (Object.hasOwn(d, kind) ? d[kind] : Object.hasOwn(d, '*') ? d['*'] : undefined);
  if (!e) return undefined;
  const gv = group ? `${group}/${version}` : version;
  const removed = e.removed ? `, unavailable in v${e.removed}+` : '';
  const use = e.replacement ? `; use ${e.replacement}` : '';
  return { text: `${gv} ${kind} is deprecated in v${e.since}+${removed}${use}`, removed: e.removed ?? '' };
}
