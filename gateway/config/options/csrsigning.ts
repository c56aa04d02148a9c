// kube-controller-manager's csrsigning flags: the CA that signs issued
// certificates (one pair for every signer, or one pair per signer, never both),
// and the longest certificate it issues.
import { duration, flagsOf, optionalPath, type OptionGroup } from './flag.js';

/** The per-signer flag prefixes and the signer each names. */
export const SIGNER_FLAGS = [
  ['kube-apiserver-client', 'kubernetes.io/kube-apiserver-client'],
  ['kubelet-client', 'kubernetes.io/kube-apiserver-client-kubelet'],
  ['kubelet-serving', 'kubernetes.io/kubelet-serving'],
  ['legacy-unknown', 'kubernetes.io/legacy-unknown'],
] as const;

type PairKey = 'General' | 'KubeApiserverClient' | 'KubeletClient' | 'KubeletServing' | 'LegacyUnknown';

export type CsrSigningOptions = {
  readonly [K in `clusterSigning${PairKey}${'Cert' | 'Key'}File`]: string | undefined;
} & {
  /** --cluster-signing-duration: the longest certificate issued. */
  readonly clusterSigningDurationMs: number;
};

const KEYS: Readonly<Record<(typeof SIGNER_FLAGS)[number][0], PairKey>> = {
  'kube-apiserver-client': 'KubeApiserverClient',
  'kubelet-client': 'KubeletClient',
  'kubelet-serving': 'KubeletServing',
  'legacy-unknown': 'LegacyUnknown',
};

/** The cert and key option names of a per-signer flag prefix ('' = the general pair). */
export function pairKeys(prefix: string): { cert: keyof CsrSigningOptions; key: keyof CsrSigningOptions } {
  const k = prefix === '' ? 'General' : KEYS[prefix as keyof typeof KEYS];
  return { cert: `clusterSigning${k}CertFile`, key: `clusterSigning${k}KeyFile` } as const;
}

const flag = flagsOf<CsrSigningOptions>();

const pairFlags = (prefix: string, what: string) => {
  const { cert, key } = pairKeys(prefix);
  const p = prefix ? `${prefix}-` : '';
  return [
    flag({ name: `cluster-signing-${p}cert-file`, key: cert, arg: 'file', help: `PEM CA certificate that signs ${what}`, parse: optionalPath }),
    flag({ name: `cluster-signing-${p}key-file`, key: key, arg: 'file', help: `PEM private key of that CA`, parse: optionalPath }),
  ];
};

export const csrSigning: OptionGroup<CsrSigningOptions> = {
  title: 'Certificate signing (csrsigning)',
  defaults: {
    clusterSigningGeneralCertFile: undefined,
    clusterSigningGeneralKeyFile: undefined,
    clusterSigningKubeApiserverClientCertFile: undefined,
    clusterSigningKubeApiserverClientKeyFile: undefined,
    clusterSigningKubeletClientCertFile: undefined,
    clusterSigningKubeletClientKeyFile: undefined,
    clusterSigningKubeletServingCertFile: undefined,
    clusterSigningKubeletServingKeyFile: undefined,
    clusterSigningLegacyUnknownCertFile: undefined,
    clusterSigningLegacyUnknownKeyFile: undefined,
    clusterSigningDurationMs: 8760 * 3600_000,
  },
  flags: [
    ...pairFlags('', 'certificates of every kubernetes.io signer (default: the dev PKI CA)'),
    ...SIGNER_FLAGS.flatMap(([prefix, signer]) => pairFlags(prefix, `${signer} certificates`)),
    flag({
      name: 'cluster-signing-duration',
      key: 'clusterSigningDurationMs',
      arg: 'duration',
      help: 'The longest certificate the signers issue',
      parse: (raw) => duration(raw, true),
    }),
  ],
  checks(o) {
    const out: string[] = [];
    const given = (prefix: string) => {
      const { cert, key } = pairKeys(prefix);
      return o[cert] !== undefined || o[key] !== undefined;
    };
    for (const prefix of ['', ...SIGNER_FLAGS.map(([p]) => p)]) {
      const { cert, key } = pairKeys(prefix);
      const p = prefix ? `${prefix}-` : '';
      if ((o[cert] === undefined) !== (o[key] === undefined)) {
        out.push(`--cluster-signing-${p}cert-file and --cluster-signing-${p}key-file must be given together`);
      }
    }
    if (given('') && SIGNER_FLAGS.some(([p]) => given(p))) {
      out.push('cannot specify --cluster-signing-{cert,key}-file and other --cluster-signing-*-file flags at the same time');
    }
    return out;
  },
};
