// What the login tests share: a bin directory where `kubectl` is one of the
// installed releases and `kubectl-gatehouse` is this checkout's plugin, a
// kubeconfig whose user runs `kubectl gatehouse oidc-login get-token`, and
// runs of kubectl and of the plugin alone.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execFileSync } from 'node:child_process';

export const PLUGIN = fileURLToPath(new URL('../../bin/kubectl-gatehouse', import.meta.url));

function kubectlDir(): string | undefined {
  try {
    return dirname(
      execFileSync('readlink', ['-f', execFileSync('sh', ['-c', 'command -v kubectl'], { encoding: 'utf8' }).trim()], { encoding: 'utf8' }).trim(),
    );
  } catch {
    return undefined;
  }
}

/** The kubectl of a release (`1.27`), when installed beside the one on PATH. */
export function kubectlOf(version: string): string | undefined {
  const dir = kubectlDir();
  const file = dir && join(dir, `kubectl.${version}`);
  return file && existsSync(file) ? file : undefined;
}

/** A directory to put first on PATH: `kubectl` (the given binary) and `kubectl-gatehouse`. */
export function binDir(dir: string, kubectl: string): string {
  const bin = join(dir, `bin-${Math.random().toString(36).slice(2)}`);
  mkdirSync(bin);
  symlinkSync(kubectl, join(bin, 'kubectl'));
  symlinkSync(PLUGIN, join(bin, 'kubectl-gatehouse'));
  return bin;
}

export function writeKubeconfig(file: string, server: string, caFile: string, getTokenArgs: string[]): void {
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      'current-context': 'oidc',
      clusters: [{ name: 'gatehouse', cluster: { server, 'certificate-authority-data': readFileSync(caFile).toString('base64') } }],
      users: [
        {
          name: 'oidc',
          user: {
            exec: {
              apiVersion: 'client.authentication.k8s.io/v1',
              command: 'kubectl',
              args: ['gatehouse', 'oidc-login', 'get-token', ...getTokenArgs],
              interactiveMode: 'IfAvailable',
            },
          },
        },
      ],
      contexts: [{ name: 'oidc', context: { cluster: 'gatehouse', user: 'oidc' } }],
    }),
  );
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end with `env` over the test's environment; `input` is written to its stdin. */
export async function run(command: string, args: string[], env: Record<string, string>, input?: string): Promise<Run> {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  if (input !== undefined) child.stdin.write(input);
  child.stdin.end();
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

/** The plugin alone, as kubectl runs it (KUBERNETES_EXEC_INFO of a v1 exec config). */
export function plugin(args: string[], env: Record<string, string> = {}, input?: string): Promise<Run> {
  return run(
    process.execPath,
    [PLUGIN, 'oidc-login', ...args],
    {
      KUBERNETES_EXEC_INFO: JSON.stringify({ kind: 'ExecCredential', apiVersion: 'client.authentication.k8s.io/v1', spec: { interactive: false } }),
      ...env,
    },
    input,
  );
}

export interface LivePlugin {
  /** Resolves with the first match of `re` in stderr so far or to come. */
  stderrMatch(re: RegExp): Promise<RegExpMatchArray>;
  write(input: string): void;
  readonly done: Promise<Run>;
}

/** The plugin alone, left running: its stderr read as it comes (a printed URL or user code), its stdin written later. */
export function livePlugin(args: string[], env: Record<string, string> = {}): LivePlugin {
  const child = spawn(process.execPath, [PLUGIN, 'oidc-login', ...args], {
    env: {
      ...process.env,
      KUBERNETES_EXEC_INFO: JSON.stringify({ kind: 'ExecCredential', apiVersion: 'client.authentication.k8s.io/v1', spec: { interactive: true } }),
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const waiters: Array<{ re: RegExp; resolve: (m: RegExpMatchArray) => void }> = [];
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    for (const w of [...waiters]) {
      const m = stderr.match(w.re);
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  });
  const done = once(child, 'close').then(([code]) => {
    for (const w of waiters) w.resolve(Object.assign([], { index: -1 }) as unknown as RegExpMatchArray);
    return { code: code as number | null, stdout, stderr };
  });
  return {
    stderrMatch(re) {
      const m = stderr.match(re);
      if (m) return Promise.resolve(m);
      return new Promise((resolve, reject) => {
        waiters.push({
          re,
          resolve: (x) => (x.index === -1 ? reject(new Error(`the plugin ended without printing ${re}: ${stderr}`)) : resolve(x)),
        });
      });
    },
    write(input) {
      child.stdin.write(input);
    },
    done,
  };
}
