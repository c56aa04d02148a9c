// `kubectl gatehouse oidc-login <command>`: get-token (the exec plugin),
// setup, clean, logout. Only get-token's warm path is loaded eagerly; the
// other commands are imported when they run.
import { writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseLoginFlags, UsageError } from './flags.js';
import { getToken } from './gettoken.js';

const USAGE = `usage:
  kubectl gatehouse oidc-login get-token --oidc-issuer-url=URL --oidc-client-id=ID [flags]
  kubectl gatehouse oidc-login setup --oidc-issuer-url=URL --oidc-client-id=ID [flags] [--verify [--kubeconfig FILE] [--context NAME]]
  kubectl gatehouse oidc-login logout --oidc-issuer-url=URL --oidc-client-id=ID [flags]
  kubectl gatehouse oidc-login clean [--token-cache-dir DIR]
flags (kubelogin's): --oidc-client-secret, --oidc-extra-scope (repeatable), --oidc-pkce-method auto|no|S256,
  --grant-type auto|authcode|authcode-keyboard|device-code|password|client-credentials, --listen-address (repeatable),
  --oidc-redirect-url, --skip-open-browser, --browser-command, --open-url-after-authentication, --username, --password,
  --token-cache-dir, --token-cache-storage disk|none, --certificate-authority (repeatable), --certificate-authority-data,
  --insecure-skip-tls-verify, --authentication-timeout-sec (180), --force-refresh, --oidc-auth-request-extra-params key=value`;

/**
 * The ExecCredential to fd 1 directly: creating process.stdout (a stream over the pipe kubectl reads) costs the warm
 * start more than the rest of its command. A pipe that is full for a moment answers EAGAIN: written again.
 */
function writeStdout(text: string): void {
  const buf = Buffer.from(text, 'utf8');
  for (let off = 0; off < buf.length;) {
    try {
      off += writeSync(1, buf, off);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
    }
  }
}

/** Warnings go to stderr (kubectl shows the plugin's stderr), each once per run. */
function warner(): (msg: string) => void {
  const seen = new Set<string>();
  return (msg) => {
    if (seen.has(msg)) return;
    seen.add(msg);
    process.stderr.write(`${msg}\n`);
  };
}

function cleanDir(argv: readonly string[]): string {
  let dir = join(homedir(), '.kube', 'cache', 'oidc-login');
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a.startsWith('--token-cache-dir=')) dir = a.slice('--token-cache-dir='.length);
    else if (a === '--token-cache-dir' && argv[i + 1] !== undefined) dir = argv[++i]!;
    else throw new UsageError(`clean takes only --token-cache-dir, not ${JSON.stringify(a)}`);
  }
  return dir;
}

export async function main(argv: readonly string[]): Promise<number> {
  const [command, ...rest] = argv;
  const warn = warner();
  try {
    switch (command) {
      case 'get-token':
        writeStdout(await getToken(parseLoginFlags(rest).login, warn));
        return 0;
      case 'setup': {
        const { setup } = await import('./setup.js');
        return await setup(parseLoginFlags(rest, { setupFlags: true }), rest, warn);
      }
      case 'logout': {
        const { logout } = await import('./logout.js');
        return await logout(parseLoginFlags(rest).login, warn);
      }
      case 'clean': {
        const { clean } = await import('./logout.js');
        return clean(cleanDir(rest), warn);
      }
      case undefined:
      case 'help':
      case '--help':
      case '-h':
        process.stdout.write(`${USAGE}\n`);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown oidc-login command ${JSON.stringify(command)}`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`error: ${err.message}\n${USAGE}\n`);
      return 2;
    }
    // A login failure is one line naming what was wrong, never a stack.
    process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
