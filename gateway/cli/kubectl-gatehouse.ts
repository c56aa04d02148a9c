// `kubectl gatehouse` (bin/kubectl-gatehouse): the access.gatehouse.dev
// reviews from a terminal, and `oidc-login` (./oidclogin), the exec plugin
// that logs a person in with OpenID Connect. kubectl runs oidc-login on every
// call, so nothing but its own entry is loaded for it. `why` posts a (Self)SubjectAccessExplanation and
// prints the chain's steps and the near misses; `who-can` posts a
// SubjectsReview and prints the subjects and what grants each. The
// kubeconfig is read as kubectl reads it (--kubeconfig, else the first file
// of $KUBECONFIG, else ~/.kube/config; --context or the current context;
// client certificates, tokens, exec plugins) by lib/kubeconfig.
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';

const GV = 'access.gatehouse.dev/v1alpha1';
const USAGE = `usage:
  kubectl gatehouse why [--as USER] [--as-group GROUP]... VERB RESOURCE[.GROUP][/SUBRESOURCE] [NAME] [-n NAMESPACE]
  kubectl gatehouse who-can VERB RESOURCE[.GROUP][/SUBRESOURCE] [NAME] [-n NAMESPACE]
  kubectl gatehouse oidc-login get-token|setup|logout|clean ... (kubelogin's flags; "oidc-login help" lists them)
  (a path instead of a resource, e.g. "why get /healthz", asks about a non-resource URL)
flags: --kubeconfig FILE, --context NAME`;

class UsageError extends Error {}

interface Parsed {
  command: 'why' | 'who-can';
  positional: string[];
  namespace: string;
  as?: string;
  asGroups: string[];
  kubeconfig?: string;
  context?: string;
}

function parseArgs(argv: readonly string[]): Parsed {
  const [command, ...rest] = argv;
  if (command !== 'why' && command !== 'who-can') throw new UsageError(command === undefined ? 'a command is required' : `unknown command "${command}"`);
  const p: Parsed = { command, positional: [], namespace: '', asGroups: [] };
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i]!;
    const eq = a.indexOf('=');
    const [flag, inline] = a.startsWith('--') && eq > 0 ? [a.slice(0, eq), a.slice(eq + 1)] : [a, undefined];
    const value = () => {
      if (inline !== undefined) return inline;
      const v = rest[++i];
      if (v === undefined) throw new UsageError(`flag ${flag} needs a value`);
      return v;
    };
    switch (flag) {
      case '-n':
      case '--namespace':
        p.namespace = value();
        break;
      case '--as':
        p.as = value();
        break;
      case '--as-group':
        p.asGroups.push(value());
        break;
      case '--kubeconfig':
        p.kubeconfig = value();
        break;
      case '--context':
        p.context = value();
        break;
      default:
        if (a.startsWith('-')) throw new UsageError(`unknown flag ${a}`);
        p.positional.push(a);
    }
  }
  if (p.command === 'who-can' && (p.as !== undefined || p.asGroups.length > 0)) throw new UsageError('who-can takes no --as: it lists the subjects');
  if (p.positional.length < 2 || p.positional.length > 3) throw new UsageError('VERB and RESOURCE (and at most a NAME) are required');
  return p;
}

/** The spec's attributes: `pods`, `deployments.apps`, `pods/log`, or a non-resource path. */
function attributesOf(p: Parsed): Record<string, unknown> {
  const [verb, what, name] = p.positional as [string, string, string | undefined];
  if (what.startsWith('/')) return { nonResourceAttributes: { verb, path: what } };
  const [res, subresource = ''] = what.split('/', 2) as [string, string?];
  const dot = res.indexOf('.');
  const resource = dot < 0 ? res : res.slice(0, dot);
  const group = dot < 0 ? '' : res.slice(dot + 1);
  return {
    resourceAttributes: {
      verb,
      resource,
      group,
      ...(subresource ? { subresource } : {}),
      ...(name ? { name } : {}),
      ...(p.namespace ? { namespace: p.namespace } : {}),
    },
  };
}

function kubeconfigPath(p: Parsed): string {
  if (p.kubeconfig) return p.kubeconfig;
  const env = process.env['KUBECONFIG'];
  const first = env?.split(delimiter).find((f) => f !== '');
  return first ?? join(homedir(), '.kube', 'config');
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length)));
  return rows
    .map((r) =>
      r
        .map((cell, c) => (c === r.length - 1 ? cell : cell.padEnd(widths[c]!)))
        .join('   ')
        .trimEnd(),
    )
    .join('\n');
}

type J = Record<string, any>;

function ref(o: J | undefined): string {
  if (!o) return '';
  return `${o['kind']} ${o['namespace'] ? `${o['namespace']}/` : ''}${o['name']}`;
}

/** What an authorizer's facts say, in words. */
function detail(s: J): string {
  if (s['rbac']) return `${ref(s['rbac'].binding)} → ${ref(s['rbac'].role)}, rule ${s['rbac'].ruleIndex}`;
  if (s['node']) return s['node'].path ? `path ${s['node'].path.join(' → ')}` : `${s['node'].rule} node rules`;
  if (s['abac']) return `policy line ${s['abac'].line ?? '?'}`;
  if (s['privileged']) return `member of ${s['privileged'].group}`;
  if (s['webhook']) {
    const w = s['webhook'];
    const conds = (w.matchConditions ?? []).map((c: J) => `${c['expression']} = ${c['result']}`).join(', ');
    return [w.cached ? 'cached answer' : w.called ? 'called' : 'not called', conds && `conditions: ${conds}`].filter(Boolean).join('; ');
  }
  return '';
}

function printWhy(status: J): string {
  const lines: string[] = [];
  const rows = [['#', 'AUTHORIZER', 'TYPE', 'DECISION', 'DETAIL']];
  (status['steps'] as J[]).forEach((s, i) =>
    rows.push([String(i + 1), s['name'], s['type'], s['decision'], [detail(s), s['reason']].filter(Boolean).join(' — ')]),
  );
  lines.push(table(rows), '');
  const verdict = status['allowed'] ? 'allowed' : status['denied'] ? 'denied' : 'not allowed (no authorizer allowed it)';
  lines.push(`Result: ${verdict}${status['decidedBy'] ? ` by ${status['decidedBy']}` : ''}`);
  if (status['evaluationError']) lines.push(`Errors: ${status['evaluationError']}`);
  const misses = (status['nearMisses'] ?? []) as J[];
  if (misses.length > 0) {
    lines.push('', 'Near misses (rules that differ from the request, or bindings that differ from the subject, in one attribute):');
    for (const m of misses) {
      const where = m['rbac'] ? `rule ${m['rbac'].ruleIndex} of ${ref(m['rbac'].role)} (${ref(m['rbac'].binding)})` : 'a rule';
      const granted = (m['granted'] as string[]).length > 0 ? (m['granted'] as string[]).join(', ') : '(none)';
      // Bindings to other subjects (SubjectAccessExplanation only): what the subject would need.
      if (m['attribute'] === 'group') lines.push(`  - ${where} would apply with group ${granted}`);
      else if (m['attribute'] === 'serviceaccount namespace')
        lines.push(`  - ${where} would apply to the ServiceAccount in namespace ${granted}, not ${JSON.stringify(m['requested'])}`);
      else lines.push(`  - ${where} grants ${m['attribute']} ${granted}, not ${JSON.stringify(m['requested'])}`);
    }
  }
  return lines.join('\n');
}

function printWhoCan(status: J): string {
  const rows = [['KIND', 'NAMESPACE', 'NAME', 'ALLOWED BY']];
  for (const s of status['subjects'] as J[]) {
    rows.push([s['kind'], s['namespace'] ?? '', s['name'], (s['allowedBy'] as J[]).map((b) => `${b['name']}: ${detail(b)}`.replace(/: $/, '')).join('; ')]);
  }
  const lines = [table(rows)];
  for (const i of (status['incompleteAuthorizers'] ?? []) as J[]) lines.push(`Incomplete: ${i['name']} (${i['type']}): ${i['reason']}`);
  return lines.join('\n');
}

export async function main(argv: readonly string[]): Promise<number> {
  if (argv[0] === 'oidc-login') return (await import('./oidclogin/index.js')).main(argv.slice(1));
  let p: Parsed;
  try {
    p = parseArgs(argv);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`error: ${err.message}\n${USAGE}\n`);
    return 2;
  }
  const file = kubeconfigPath(p);
  // The client (TLS, tracing, YAML) loads only once a command will talk to a server: usage errors answer without it.
  const { clientFromKubeconfig } = await import('../../lib/kubeconfig/index.js');
  const client = await clientFromKubeconfig(file, p.context !== undefined ? { context: p.context } : {});
  try {
    const spec = attributesOf(p);
    let kind: string;
    if (p.command === 'who-can') kind = 'SubjectsReview';
    else if (p.as !== undefined || p.asGroups.length > 0) {
      kind = 'SubjectAccessExplanation';
      Object.assign(spec, { ...(p.as !== undefined ? { user: p.as } : {}), groups: p.asGroups });
    } else kind = 'SelfSubjectAccessExplanation';
    const plural = `${kind.toLowerCase()}s`;
    const r = await client.postJson(`/apis/${GV}/${plural}`, { apiVersion: GV, kind, spec });
    const body = (r.json ?? {}) as J;
    if (r.status === 404) {
      process.stderr.write(`error: the server does not serve ${GV} ${plural} (a Gatehouse started with --runtime-config=${GV}=true does)\n`);
      return 1;
    }
    if (r.status !== 201) {
      process.stderr.write(`error: ${typeof body['message'] === 'string' ? body['message'] : `the server answered HTTP ${r.status}`}\n`);
      return 1;
    }
    process.stdout.write(`${p.command === 'why' ? printWhy(body['status']) : printWhoCan(body['status'])}\n`);
    return 0;
  } finally {
    client.close();
  }
}
