// GET /version: the fields of client-go's version.Info. kubectl compares
// major/minor for its skew warning and prints gitVersion; the emulation and
// compatibility fields (1.33) say which Kubernetes behaviour is served.
export interface VersionInfo {
  major: string;
  minor: string;
  emulationMajor: string;
  emulationMinor: string;
  minCompatibilityMajor: string;
  minCompatibilityMinor: string;
  gitVersion: string;
  gitCommit: string;
  gitTreeState: string;
  buildDate: string;
  goVersion: string;
  compiler: string;
  platform: string;
}

export interface VersionOptions {
  gitCommit?: string;
  gitTreeState?: 'clean' | 'dirty' | '';
  buildDate?: string;
  /** The runtime in place of Go's version, e.g. `node v20.11.0`. */
  runtime?: string;
  platform?: string;
}

export const KUBE_MAJOR = '1';
export const KUBE_MINOR = '33';

const GO_ARCH: Readonly<Record<string, string>> = { x64: 'amd64', ia32: '386', arm64: 'arm64', arm: 'arm', ppc64: 'ppc64le', s390x: 's390x' };

export function versionInfo(opts: VersionOptions = {}): VersionInfo {
  return {
    major: KUBE_MAJOR,
    minor: KUBE_MINOR,
    emulationMajor: KUBE_MAJOR,
    emulationMinor: KUBE_MINOR,
    minCompatibilityMajor: KUBE_MAJOR,
    minCompatibilityMinor: String(Number(KUBE_MINOR) - 1),
    gitVersion: `v${KUBE_MAJOR}.${KUBE_MINOR}.0-gatehouse`,
    gitCommit: opts.gitCommit ?? '',
    gitTreeState: opts.gitTreeState ?? '',
    buildDate: opts.buildDate ?? '1970-01-01T00:00:00Z',
    goVersion: opts.runtime ?? `node ${process.version}`,
    compiler: 'tsc',
    // Go's GOOS/GOARCH spelling, which clients print and some parse.
    platform: opts.platform ?? `${process.platform}/${GO_ARCH[process.arch] ?? process.arch}`,
  };
}
