// `gatehouse certs …`: the PKI tool on the command line. argv is what follows
// `certs`. Every failure is one line on stderr and exit code 1, never a stack.
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ensureDevPki, devPkiPaths, readOptional, writeFileAtomic } from './devpki.js';
import { renderKubeconfig, serverUrl } from './kubeconfig.js';
import { generateClientCert } from './pki.js';
import { csrKubeconfig } from './csrkubeconfig.js';
import { renderOidcKubeconfig, serveFlags } from './oidckubeconfig.js';

export interface CertsIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

const defaultIo: CertsIo = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
};

export const CERTS_USAGE = `Usage: gatehouse certs <command> [flags]

Commands:
  init    --dir <dir> [--host 127.0.0.1] [--port 6443] [--san <name|ip> ...]
          Create (or complete) the dev PKI in <dir>/pki and <dir>/admin.kubeconfig.
          Existing CAs are never replaced.
  client  --dir <dir> --user <name> [--group <group> ...] [--out <path>] [--server <url>]
          Issue a client certificate signed by <dir>/pki/ca.crt and write a kubeconfig
          for it (default <dir>/<user>.kubeconfig).
  csr-kubeconfig  --name <csr> --key <key.pem> [--kubeconfig <admin.kubeconfig> | --dir <dir>] [--out <path>] [--server <url>]
          Write a kubeconfig for an issued CertificateSigningRequest: its certificate read
          from the API with --kubeconfig (default <dir>/admin.kubeconfig), the key that
          signed the request (default out: <dir or .>/<csr>.kubeconfig).
  oidc-kubeconfig  --dir <dir> --issuer-url <url> --client-id <id> [--client-secret <s>]
          [--extra-scope <scope> ...] [--certificate-authority <provider-ca.pem> ...]
          [--get-token-arg <flag> ...] [--user oidc] [--out <path>] [--server <url>]
          Write a kubeconfig whose user logs in with OpenID Connect through
          "kubectl gatehouse oidc-login get-token" (default <dir>/<user>.kubeconfig),
          and print the serve flags that accept its tokens.
  help    Show this text.`;

class UsageError extends Error {}

/** `list` is repeatable; `csv` is repeatable and also splits on commas (SANs never hold one; group names may). */
type Spec = Record<string, 'string' | 'list' | 'csv'>;
type Parsed = { strings: Map<string, string>; lists: Map<string, string[]> };

export async function runCertsCommand(argv: string[], io: CertsIo = defaultIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'init':
        return await init(parseArgs(rest, { dir: 'string', host: 'string', port: 'string', san: 'csv' }), io);
      case 'client':
        return await client(parseArgs(rest, { dir: 'string', user: 'string', group: 'list', out: 'string', server: 'string' }), io);
      case 'csr-kubeconfig':
        return await fromCsr(parseArgs(rest, { name: 'string', key: 'string', kubeconfig: 'string', dir: 'string', out: 'string', server: 'string' }), io);
      case 'oidc-kubeconfig':
        return await oidc(
          parseArgs(rest, {
            dir: 'string',
            'issuer-url': 'string',
            'client-id': 'string',
            'client-secret': 'string',
            'extra-scope': 'list',
            'certificate-authority': 'list',
            'get-token-arg': 'list',
            user: 'string',
            out: 'string',
            server: 'string',
          }),
          io,
        );
      case 'help':
      case '--help':
      case '-h':
        io.out(CERTS_USAGE);
        return 0;
      case undefined:
        throw new UsageError('missing command: run "gatehouse certs help"');
      default:
        throw new UsageError(`unknown command "${command}": run "gatehouse certs help"`);
    }
  } catch (err) {
    io.err(`gatehouse certs: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

async function init(args: Parsed, io: CertsIo): Promise<number> {
  const dir = required(args, 'dir');
  const host = args.strings.get('host') ?? '127.0.0.1';
  const port = parsePort(args.strings.get('port') ?? '6443');
  const paths = await ensureDevPki(dir, { host, port, sans: args.lists.get('san') ?? [] });
  io.out(`dev PKI ready in ${paths.dir}`);
  io.out(`kubeconfig: ${paths.kubeconfig}`);
  return 0;
}

async function client(args: Parsed, io: CertsIo): Promise<number> {
  const dir = required(args, 'dir');
  const user = required(args, 'user');
  const groups = args.lists.get('group') ?? [];
  const paths = devPkiPaths(dir);
  const [caCert, caKey] = await Promise.all([readOptional(paths.caCert), readOptional(paths.caKey)]);
  if (caCert === undefined || caKey === undefined) {
    throw new Error(`no CA in "${paths.dir}": run "gatehouse certs init --dir ${dir}" first`);
  }
  const server = args.strings.get('server') ?? (await serverFromAdminKubeconfig(paths.kubeconfig)) ?? serverUrl('127.0.0.1', 6443);
  const leaf = generateClientCert({ certPem: caCert, keyPem: caKey }, { user, groups });
  // The file name comes from the user name, which may hold ':' or '/' (system:node:x): keep it inside <dir>.
  const out = args.strings.get('out') ?? join(dir, `${user.replace(/[^A-Za-z0-9._-]/g, '_')}.kubeconfig`);
  await mkdir(dirname(out), { recursive: true });
  await writeFileAtomic(
    out,
    renderKubeconfig({
      server,
      caPem: caCert,
      clientCertPem: leaf.certPem,
      clientKeyPem: leaf.keyPem,
      userName: user,
    }),
    0o600,
  );
  io.out(`kubeconfig for user "${user}"${groups.length ? ` (groups ${groups.join(', ')})` : ''}: ${out}`);
  return 0;
}

async function fromCsr(args: Parsed, io: CertsIo): Promise<number> {
  const name = required(args, 'name');
  const dir = args.strings.get('dir');
  const kubeconfigPath = args.strings.get('kubeconfig') ?? (dir !== undefined ? devPkiPaths(dir).kubeconfig : undefined);
  if (kubeconfigPath === undefined) throw new UsageError('missing required flag: --kubeconfig (or --dir)');
  const [kubeconfigText, keyPem] = await Promise.all([readOptional(kubeconfigPath), readOptional(required(args, 'key'))]);
  if (kubeconfigText === undefined) throw new Error(`no kubeconfig at "${kubeconfigPath}"`);
  if (keyPem === undefined) throw new Error(`no key file at "${required(args, 'key')}"`);
  const server = args.strings.get('server');
  const { text, user } = await csrKubeconfig({ kubeconfigText, csrName: name, keyPem, ...(server !== undefined ? { server } : {}) });
  const out = args.strings.get('out') ?? join(dir ?? '.', `${name.replace(/[^A-Za-z0-9._-]/g, '_')}.kubeconfig`);
  await mkdir(dirname(out), { recursive: true });
  await writeFileAtomic(out, text, 0o600);
  io.out(`kubeconfig for user "${user}" from the request "${name}": ${out}`);
  return 0;
}

async function oidc(args: Parsed, io: CertsIo): Promise<number> {
  const dir = required(args, 'dir');
  const issuerUrl = required(args, 'issuer-url');
  if (!/^https:\/\//.test(issuerUrl)) throw new UsageError(`invalid value "${issuerUrl}" for --issuer-url: the issuer must be an https URL`);
  const paths = devPkiPaths(dir);
  const caPem = await readOptional(paths.caCert);
  if (caPem === undefined) throw new Error(`no CA in "${paths.dir}": run "gatehouse certs init --dir ${dir}" first`);
  const user = args.strings.get('user') ?? 'oidc';
  const secret = args.strings.get('client-secret');
  const input = {
    server: args.strings.get('server') ?? (await serverFromAdminKubeconfig(paths.kubeconfig)) ?? serverUrl('127.0.0.1', 6443),
    caPem,
    issuerUrl,
    clientId: required(args, 'client-id'),
    ...(secret !== undefined ? { clientSecret: secret } : {}),
    extraScopes: args.lists.get('extra-scope') ?? [],
    providerCas: args.lists.get('certificate-authority') ?? [],
    extraArgs: args.lists.get('get-token-arg') ?? [],
    userName: user,
  };
  const out = args.strings.get('out') ?? join(dir, `${user.replace(/[^A-Za-z0-9._-]/g, '_')}.kubeconfig`);
  await mkdir(dirname(out), { recursive: true });
  await writeFileAtomic(out, renderOidcKubeconfig(input), 0o600);
  io.out(`kubeconfig for OpenID Connect user "${user}": ${out}`);
  io.out(`start Gatehouse to accept its tokens: gatehouse serve ${serveFlags(input).join(' ')}`);
  return 0;
}

/** The server URL `init` recorded, so client kubeconfigs point where the admin one does. */
async function serverFromAdminKubeconfig(path: string): Promise<string | undefined> {
  const text = await readOptional(path);
  if (text === undefined) return undefined;
  const doc: unknown = parseYaml(text);
  const clusters = (doc as { clusters?: unknown } | null)?.clusters;
  if (!Array.isArray(clusters)) return undefined;
  const server = (clusters[0] as { cluster?: { server?: unknown } } | undefined)?.cluster?.server;
  return typeof server === 'string' ? server : undefined;
}

function parseArgs(argv: string[], spec: Spec): Parsed {
  const parsed: Parsed = { strings: new Map(), lists: new Map() };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const m = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(arg);
    if (!m) throw new UsageError(`unexpected argument "${arg}"`);
    const name = m[1]!;
    const kind = spec[name];
    if (kind === undefined) throw new UsageError(`unknown flag: --${name}`);
    let value = m[2];
    if (value === undefined) {
      value = argv[++i];
      if (value === undefined) throw new UsageError(`flag needs an argument: --${name}`);
    }
    if (kind === 'list' || kind === 'csv') {
      const items =
        kind === 'csv'
          ? value
              .split(',')
              .map((s) => s.trim())
              .filter((s) => s !== '')
          : [value];
      parsed.lists.set(name, [...(parsed.lists.get(name) ?? []), ...items]);
    } else {
      if (parsed.strings.has(name)) throw new UsageError(`flag given twice: --${name}`);
      parsed.strings.set(name, value);
    }
  }
  return parsed;
}

function required(args: Parsed, name: string): string {
  const v = args.strings.get(name);
  if (v === undefined || v === '') throw new UsageError(`missing required flag: --${name}`);
  return v;
}

function parsePort(s: string): number {
  const n = /^[0-9]+$/.test(s) ? Number(s) : NaN;
  if (!Number.isInteger(n) || n < 1 || n > 65535) {
    throw new UsageError(`invalid value "${s}" for --port: must be an integer between 1 and 65535`);
  }
  return n;
}
