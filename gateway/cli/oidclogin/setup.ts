// `setup`: one login, then what to do with it: the token's claims, the
// `kubectl config set-credentials` command that runs get-token with the same
// flags, and the Gatehouse flags that accept the token. With --verify it asks
// the server itself: the SelfSubjectReview says who this server makes of the
// token (after its claim mappings and validation rules), and the rules review
// (and, when served, the access explanation) what that user may then do.
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Parsed } from './flags.js';
import { obtainToken } from './obtain.js';
import { claimsOf } from './idtoken.js';
import type { Warn } from './tokencache.js';

type J = Record<string, any>;

/** A shell word, quoted only when it needs to be. */
function sh(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

const SETUP_ONLY = new Set(['--verify', '--kubeconfig', '--context']);

/** The get-token arguments: setup's own, minus the flags only setup takes. */
function getTokenArgs(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const flag = a.includes('=') ? a.slice(0, a.indexOf('=')) : a;
    if (SETUP_ONLY.has(flag)) {
      if (flag !== '--verify' && !a.includes('=')) i++;
      continue;
    }
    if (a.startsWith('--') && !a.includes('=') && argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--') && !BOOLEAN.has(a)) {
      out.push(`${a}=${argv[++i]}`);
    } else out.push(a);
  }
  return out;
}
const BOOLEAN = new Set(['--skip-open-browser', '--insecure-skip-tls-verify', '--force-refresh']);

function kubeconfigFile(p: Parsed): string {
  if (p.setup.kubeconfig) return p.setup.kubeconfig;
  const first = process.env['KUBECONFIG']?.split(delimiter).find((f) => f !== '');
  return first ?? join(homedir(), '.kube', 'config');
}

async function verify(p: Parsed, token: string, out: string[]): Promise<number> {
  const { loadKubeconfig, KubeClient } = await import('../../../lib/kubeconfig/index.js');
  const file = kubeconfigFile(p);
  const config = await loadKubeconfig(file, p.setup.context !== undefined ? { context: p.setup.context } : {});
  // The cluster of the kubeconfig, the fresh token as the only credential.
  const c = new KubeClient({ ...config, user: { name: 'oidc-login setup', token } });
  try {
    out.push('', `## What ${config.cluster.server} makes of this token`, '');
    const review = await c.postJson('/apis/authentication.k8s.io/v1/selfsubjectreviews', { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
    const body = (review.json ?? {}) as J;
    if (review.status !== 201 && review.status !== 200) {
      out.push(`The server refused the token: HTTP ${review.status}${typeof body['message'] === 'string' ? `: ${body['message']}` : ''}`);
      if (review.status === 401) out.push('Start Gatehouse with the flags above (or an AuthenticationConfiguration for this issuer and audience).');
      return 1;
    }
    const u = (body['status']?.['userInfo'] ?? {}) as J;
    out.push(`username: ${u['username'] ?? ''}`);
    if (u['uid']) out.push(`uid:      ${u['uid']}`);
    out.push(`groups:   ${((u['groups'] as string[] | undefined) ?? []).join(', ')}`);
    for (const [k, v] of Object.entries((u['extra'] ?? {}) as Record<string, string[]>)) out.push(`extra ${k}: ${v.join(', ')}`);

    const rules = await c.postJson('/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SelfSubjectRulesReview',
      spec: { namespace: 'default' },
    });
    const rs = ((rules.json as J | undefined)?.['status'] ?? {}) as J;
    if (rules.status === 201) {
      out.push('', 'What this user may do in namespace default (SelfSubjectRulesReview):');
      for (const r of (rs['resourceRules'] ?? []) as J[]) {
        out.push(
          `  ${(r['verbs'] as string[]).join(',')} ${(r['resources'] as string[]).join(',')}${(r['apiGroups'] as string[] | undefined)?.some((g) => g) ? ` (${(r['apiGroups'] as string[]).join(',')})` : ''}`,
        );
      }
      if (rs['incomplete']) out.push(`  (incomplete${rs['evaluationError'] ? `: ${rs['evaluationError']}` : ''})`);
    }
    const why = await c.postJson('/apis/access.gatehouse.dev/v1alpha1/selfsubjectaccessexplanations', {
      apiVersion: 'access.gatehouse.dev/v1alpha1',
      kind: 'SelfSubjectAccessExplanation',
      spec: { resourceAttributes: { verb: 'list', resource: 'namespaces', group: '' } },
    });
    if (why.status === 201) {
      const st = ((why.json as J)['status'] ?? {}) as J;
      out.push('', `list namespaces: ${st['allowed'] ? 'allowed' : 'not allowed'}${st['decidedBy'] ? ` by ${st['decidedBy']}` : ''}`);
      for (const s of (st['steps'] ?? []) as J[]) {
        const b = s['rbac'];
        out.push(
          `  ${s['name']}: ${s['decision']}${b ? ` (${b.binding?.kind} ${b.binding?.name} -> ${b.role?.kind} ${b.role?.name})` : ''}${s['reason'] ? ` ${s['reason']}` : ''}`,
        );
      }
    } else out.push('', '(the access explanation API access.gatehouse.dev is not served here: bindings not shown)');
    return 0;
  } finally {
    c.close();
  }
}

export async function setup(p: Parsed, argv: readonly string[], warn: Warn): Promise<number> {
  const tokens = await obtainToken(p.login, warn);
  const claims = claimsOf(tokens.id_token) ?? {};
  const o = p.login;
  const out: string[] = ['## Authenticated with the OpenID Connect provider', '', 'The ID token carries these claims:', JSON.stringify(claims, null, 2)];
  const args = getTokenArgs(argv);
  out.push(
    '',
    '## Set up the kubeconfig',
    '',
    [
      'kubectl config set-credentials oidc',
      '--exec-api-version=client.authentication.k8s.io/v1',
      '--exec-interactive-mode=IfAvailable',
      '--exec-command=kubectl',
      '--exec-arg=gatehouse',
      '--exec-arg=oidc-login',
      '--exec-arg=get-token',
      ...args.map((a) => `--exec-arg=${sh(a)}`),
    ].join(' \\\n  '),
    '',
    '## Start Gatehouse to accept these tokens',
    '',
    [
      `gatehouse serve --oidc-issuer-url=${sh(String(claims['iss'] ?? o.issuerUrl))}`,
      `--oidc-client-id=${sh(o.clientId)}`,
      '--oidc-username-claim=sub',
      ...(Object.hasOwn(claims, 'groups') ? ['--oidc-groups-claim=groups'] : []),
      ...o.certificateAuthorities.slice(0, 1).map((f) => `--oidc-ca-file=${sh(f)}`),
    ].join(' \\\n  '),
    '(or an AuthenticationConfiguration with jwt[].issuer.url and audiences as above, given by --authentication-config)',
  );
  let code = 0;
  if (p.setup.verify) code = await verify(p, tokens.id_token, out);
  process.stdout.write(`${out.join('\n')}\n`);
  return code;
}
