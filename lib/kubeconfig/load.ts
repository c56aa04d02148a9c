// Reads a kubeconfig file into one frozen ClientConfig: the chosen context's
// cluster (server, CA, TLS options, exec extension) and user (client cert and
// key, token or token file, exec plugin). Files named in it are resolved
// against the kubeconfig's own directory and read once, here; every problem
// is a ConfigError naming the file and the field.
import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../config/error.js';

export const EXEC_API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'] as const;
export type ExecApiVersion = (typeof EXEC_API_VERSIONS)[number];
export const INTERACTIVE_MODES = ['Never', 'IfAvailable', 'Always'] as const;
export type InteractiveMode = (typeof INTERACTIVE_MODES)[number];
/** The cluster extension whose value an exec plugin receives as spec.cluster.config. */
export const EXEC_CLUSTER_EXTENSION = 'client.authentication.k8s.io/exec';

export interface ClusterConfig {
  readonly name: string;
  readonly server: string;
  /** PEM CA bundle (from certificate-authority-data or the certificate-authority file). */
  readonly caPem?: string;
  readonly insecureSkipTlsVerify: boolean;
  readonly tlsServerName?: string;
  /** The cluster's `client.authentication.k8s.io/exec` extension, for exec plugins. */
  readonly execConfig?: unknown;
}

export interface ExecConfig {
  readonly command: string;
  readonly args: readonly string[];
  readonly env: readonly { readonly name: string; readonly value: string }[];
  readonly apiVersion: ExecApiVersion;
  readonly interactiveMode: InteractiveMode;
  readonly provideClusterInfo: boolean;
  readonly installHint?: string;
}

export interface UserConfig {
  readonly name: string;
  readonly clientCertPem?: string;
  readonly clientKeyPem?: string;
  readonly token?: string;
  /** Absolute path; re-read now and then so rotated tokens are picked up. */
  readonly tokenFile?: string;
  readonly exec?: ExecConfig;
}

export interface ClientConfig {
  /** The kubeconfig file (absolute), or '' when built in memory. */
  readonly source: string;
  readonly context: string;
  readonly cluster: ClusterConfig;
  readonly user: UserConfig;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Loads `file` and picks `context` (default: current-context, or the only context). */
export async function loadKubeconfig(file: string, opts: { context?: string } = {}): Promise<ClientConfig> {
  const path = resolve(file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    throw new ConfigError(`kubeconfig "${path}" cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  return parseKubeconfig(text, path, opts);
}

/** Parses kubeconfig text; `source` is the file it came from (relative paths resolve against its directory). */
export async function parseKubeconfig(text: string, source: string, opts: { context?: string } = {}): Promise<ClientConfig> {
  const where = { kind: 'kubeconfig', ...(source ? { file: source } : {}) };
  const fail = (field: string, why: string): never => {
    throw new ConfigError(why, { ...where, field });
  };
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100 });
  } catch (err) {
    throw new ConfigError(`not valid YAML: ${err instanceof Error ? err.message.split('\n', 1)[0] : String(err)}`, where);
  }
  if (!isObj(doc)) throw new ConfigError('must be a YAML object', where);
  const baseDir = source ? dirname(source) : process.cwd();

  const named = (list: string): Map<string, { index: number; value: Obj }> => {
    const raw = doc[list] ?? [];
    if (!Array.isArray(raw)) fail(list, 'must be a list');
    const out = new Map<string, { index: number; value: Obj }>();
    (raw as unknown[]).forEach((item, index) => {
      if (!isObj(item) || typeof item['name'] !== 'string' || item['name'] === '') fail(`${list}[${index}].name`, 'required');
      const entry = (item as Obj)[list.slice(0, -1)];
      if (!isObj(entry)) fail(`${list}[${index}].${list.slice(0, -1)}`, 'required');
      out.set((item as Obj)['name'] as string, { index, value: entry as Obj });
    });
    return out;
  };
  const clusters = named('clusters');
  const users = named('users');
  const contexts = named('contexts');

  let contextName = opts.context ?? (typeof doc['current-context'] === 'string' ? doc['current-context'] : '');
  if (contextName === '') {
    if (contexts.size !== 1) fail('current-context', 'required when the file has more than one context');
    contextName = [...contexts.keys()][0]!;
  }
  const ctx = contexts.get(contextName) ?? fail('current-context', `no context named "${contextName}"`);
  const clusterName = ctx.value['cluster'];
  const userName = ctx.value['user'] ?? '';
  if (typeof clusterName !== 'string' || clusterName === '') fail(`contexts[${ctx.index}].context.cluster`, 'required');
  if (typeof userName !== 'string') fail(`contexts[${ctx.index}].context.user`, 'must be a string');
  const c = clusters.get(clusterName as string) ?? fail(`contexts[${ctx.index}].context.cluster`, `no cluster named "${String(clusterName)}"`);
  const u =
    userName === ''
      ? { index: -1, value: {} as Obj }
      : (users.get(userName as string) ?? fail(`contexts[${ctx.index}].context.user`, `no user named "${String(userName)}"`));

  const reader = new FieldReader(baseDir, fail);
  const cluster = await reader.cluster(clusterName as string, `clusters[${c.index}].cluster`, c.value);
  const user = await reader.user(userName as string, `users[${u.index}].user`, u.value);
  return Object.freeze({ source, context: contextName, cluster, user });
}

class FieldReader {
  constructor(
    private readonly baseDir: string,
    private readonly fail: (field: string, why: string) => never,
  ) {}

  private str(o: Obj, field: string, key: string): string | undefined {
    const v = o[key];
    if (v === undefined || v === null || v === '') return undefined;
    if (typeof v !== 'string') this.fail(`${field}.${key}`, 'must be a string');
    return v as string;
  }

  private bool(o: Obj, field: string, key: string): boolean {
    const v = o[key];
    if (v === undefined || v === null) return false;
    if (typeof v !== 'boolean') this.fail(`${field}.${key}`, 'must be true or false');
    return v as boolean;
  }

  private path(p: string): string {
    return isAbsolute(p) ? p : resolve(this.baseDir, p);
  }

  private async file(field: string, p: string): Promise<string> {
    try {
      return await readFile(this.path(p), 'utf8');
    } catch (err) {
      return this.fail(field, `file "${this.path(p)}" cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
  }

  /** `<key>-data` (base64 PEM) or `<key>` (a file); the data form wins, as in client-go. */
  private async pem(o: Obj, field: string, key: string): Promise<string | undefined> {
    const data = this.str(o, field, `${key}-data`);
    if (data !== undefined) {
      const pem = Buffer.from(data, 'base64').toString('utf8');
      if (!pem.includes('-----BEGIN')) this.fail(`${field}.${key}-data`, 'must be base64-encoded PEM');
      return pem;
    }
    const file = this.str(o, field, key);
    return file === undefined ? undefined : this.file(`${field}.${key}`, file);
  }

  async cluster(name: string, field: string, o: Obj): Promise<ClusterConfig> {
    const server = this.str(o, field, 'server') ?? this.fail(`${field}.server`, 'required');
    let url: URL;
    try {
      url = new URL(server);
    } catch {
      return this.fail(`${field}.server`, `"${server}" is not a URL`);
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') this.fail(`${field}.server`, `"${server}" must be an https:// or http:// URL`);
    const caPem = await this.pem(o, field, 'certificate-authority');
    const insecure = this.bool(o, field, 'insecure-skip-tls-verify');
    if (insecure && caPem !== undefined) this.fail(`${field}.insecure-skip-tls-verify`, 'must not be set together with a certificate authority');
    const tlsServerName = this.str(o, field, 'tls-server-name');
    let execConfig: unknown;
    const ext = o['extensions'];
    if (ext !== undefined && ext !== null) {
      if (!Array.isArray(ext)) this.fail(`${field}.extensions`, 'must be a list');
      for (const e of ext as unknown[]) if (isObj(e) && e['name'] === EXEC_CLUSTER_EXTENSION) execConfig = e['extension'];
    }
    return Object.freeze({
      name,
      server,
      insecureSkipTlsVerify: insecure,
      ...(caPem !== undefined ? { caPem } : {}),
      ...(tlsServerName !== undefined ? { tlsServerName } : {}),
      ...(execConfig !== undefined ? { execConfig } : {}),
    });
  }

  async user(name: string, field: string, o: Obj): Promise<UserConfig> {
    const clientCertPem = await this.pem(o, field, 'client-certificate');
    const clientKeyPem = await this.pem(o, field, 'client-key');
    if ((clientCertPem === undefined) !== (clientKeyPem === undefined))
      this.fail(`${field}.client-key`, 'client-certificate and client-key must be given together');
    const token = this.str(o, field, 'token');
    const tokenFileRaw = this.str(o, field, 'tokenFile');
    const tokenFile = tokenFileRaw === undefined ? undefined : this.path(tokenFileRaw);
    if (tokenFile !== undefined && token === undefined) await this.file(`${field}.tokenFile`, tokenFile);
    for (const k of ['username', 'password', 'auth-provider']) if (o[k] !== undefined) this.fail(`${field}.${k}`, 'not supported');
    const exec = o['exec'] === undefined || o['exec'] === null ? undefined : this.exec(`${field}.exec`, o['exec']);
    if (exec && (token !== undefined || tokenFile !== undefined) && clientCertPem === undefined) {
      // client-go lets a static token win over exec; say so rather than silently ignore one.
      this.fail(`${field}.exec`, 'must not be set together with token or tokenFile');
    }
    return Object.freeze({
      name,
      ...(clientCertPem !== undefined ? { clientCertPem, clientKeyPem: clientKeyPem! } : {}),
      ...(token !== undefined ? { token } : {}),
      ...(tokenFile !== undefined && token === undefined ? { tokenFile } : {}),
      ...(exec ? { exec } : {}),
    });
  }

  private exec(field: string, raw: unknown): ExecConfig {
    if (!isObj(raw)) return this.fail(field, 'must be an object');
    const commandRaw = this.str(raw, field, 'command') ?? this.fail(`${field}.command`, 'required');
    // A command with a path separator is relative to the kubeconfig; a bare name is looked up in PATH.
    const command = commandRaw.includes('/') ? this.path(commandRaw) : commandRaw;
    const apiVersion = this.str(raw, field, 'apiVersion') ?? this.fail(`${field}.apiVersion`, 'required');
    if (!(EXEC_API_VERSIONS as readonly string[]).includes(apiVersion))
      this.fail(`${field}.apiVersion`, `"${apiVersion}" is not one of ${EXEC_API_VERSIONS.join(', ')}`);
    let mode = this.str(raw, field, 'interactiveMode');
    if (mode === undefined) {
      if (apiVersion === 'client.authentication.k8s.io/v1') this.fail(`${field}.interactiveMode`, 'required for client.authentication.k8s.io/v1');
      mode = 'IfAvailable';
    }
    if (!(INTERACTIVE_MODES as readonly string[]).includes(mode))
      this.fail(`${field}.interactiveMode`, `"${mode}" is not one of ${INTERACTIVE_MODES.join(', ')}`);
    const args = raw['args'] ?? [];
    if (!Array.isArray(args) || !args.every((a) => typeof a === 'string')) this.fail(`${field}.args`, 'must be a list of strings');
    const envRaw = raw['env'] ?? [];
    if (!Array.isArray(envRaw)) this.fail(`${field}.env`, 'must be a list');
    const env = (envRaw as unknown[]).map((e, i) => {
      if (!isObj(e) || typeof e['name'] !== 'string' || typeof e['value'] !== 'string')
        return this.fail(`${field}.env[${i}]`, 'must have a string name and value');
      return Object.freeze({ name: e['name'] as string, value: e['value'] as string });
    });
    const installHint = this.str(raw, field, 'installHint');
    return Object.freeze({
      command,
      args: Object.freeze([...(args as string[])]),
      env: Object.freeze(env),
      apiVersion: apiVersion as ExecApiVersion,
      interactiveMode: mode as InteractiveMode,
      provideClusterInfo: this.bool(raw, field, 'provideClusterInfo'),
      ...(installHint !== undefined ? { installHint } : {}),
    });
  }
}
