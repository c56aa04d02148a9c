// `gatehouse <command>`: serve (the default of `npm start`), certs, help.
// Invalid input ends the process with one clear line and exit code 1.
// Each command loads only its own modules (the server's take seconds to load
// on a busy machine; `help` and `certs` need none of them, the sidecar not the
// core backend's), all of them before the intrinsics are hardened: the flags
// are parsed first (they say which modules), then the rest is loaded.
import { cliErrorLine } from '../../lib/config/error.js';
import type { ServeOptions } from '../config/flags.js';
import type { BackendKind } from '../backendprocess/flags.js';
import type { translateArgs as TranslateArgsFn } from '../rbacproxy/args.js';

type TranslateArgs = typeof TranslateArgsFn;
import { hardenIntrinsics } from './harden.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const log = (msg: string): void => {
  process.stderr.write(`${new Date().toISOString()} ${msg}\n`);
};

const HELP = `Usage: gatehouse <command> [flags]

Commands:
  serve          serve the Kubernetes-compatible API (default of npm start)
  certs          generate the dev PKI and client kubeconfigs (gatehouse certs help)
  core-backend   the core backend as its own HTTPS process behind a gateway (request-header authentication)
  sample-backend the sample aggregated backend (samples.gatehouse.dev/v1 Widgets) as its own HTTPS process
  kube-rbac-proxy  sidecar mode from kube-rbac-proxy's command line (a drop-in for its Deployments)
  help           this text

Run "gatehouse serve --help" for the flags of serve.`;

/** What a started process gives the CLI: the line to print, and its one shutdown path. */
interface Started {
  readonly banner: string;
  shutdown(signal: string): Promise<void>;
}

/** Starts a process (one clear line and exit 1 if it cannot), prints its banner, and runs until SIGTERM or SIGINT has shut it down. */
async function run(start: () => Promise<Started>): Promise<number> {
  let running: Started;
  try {
    running = await start();
  } catch (err) {
    process.stderr.write(cliErrorLine(err, 'cannot start'));
    return 1;
  }
  process.stdout.write(`${running.banner}\n`);
  await new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      void running.shutdown(signal).then(resolve);
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
  return 0;
}

/**
 * The flag parser every serving command starts with; what a command then runs on is
 * loaded once the flags say which (a sidecar never loads the core backend: ~1 s of CPU).
 */
async function flagModules() {
  const flags = await import('../config/flags.js');
  return { parseServeFlags: flags.parseServeFlags, usage: flags.usage, wantsHelp: flags.wantsHelp };
}
type FlagModules = Awaited<ReturnType<typeof flagModules>>;

const serverModule = async () => (await import('../server/app.js')).startServer;
const sidecarModule = async () => (await import('../sidecar/index.js')).startSidecar;
async function backendModules() {
  const [backendStart, backendFlags] = await Promise.all([import('../backendprocess/start.js'), import('../backendprocess/flags.js')]);
  return { startBackendProcess: backendStart.startBackendProcess, unhonouredFlag: backendFlags.unhonouredFlag };
}

async function serve(m: FlagModules, argv: string[]): Promise<number> {
  const { wantsHelp, usage, parseServeFlags } = m;
  if (wantsHelp(argv)) {
    hardenIntrinsics();
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  const parsed = parseServeFlags(argv);
  if ('error' in parsed) {
    hardenIntrinsics();
    process.stderr.write(cliErrorLine(parsed.error));
    return 1;
  }
  const opts = parsed.options;
  if (opts.upstream !== undefined) return sidecar(await loaded(sidecarModule()), opts);
  const startServer = await loaded(serverModule());
  return run(async () => {
    const running = await startServer(opts, { log });
    const lines = [`Gatehouse is serving on ${running.url} (storage: ${opts.storageBackend}, data: ${opts.dataDir})`];
    if (running.kubeconfig) {
      lines.push('Connect with kubectl:', `  kubectl --kubeconfig ${running.kubeconfig} get namespaces`, `  export KUBECONFIG=${running.kubeconfig}`);
    }
    return { banner: lines.join('\n'), shutdown: running.shutdown };
  });
}

/** `gatehouse serve --upstream=<url>`: sidecar mode (gateway/sidecar/). */
function sidecar(startSidecar: Awaited<ReturnType<typeof sidecarModule>>, opts: ServeOptions): Promise<number> {
  return run(async () => {
    const running = await startSidecar(opts, { log });
    return { banner: `Gatehouse sidecar is serving on ${running.url}, proxying to ${running.upstream}`, shutdown: running.shutdown };
  });
}

/** `gatehouse kube-rbac-proxy [its flags]`: sidecar mode from kube-rbac-proxy's command line (gateway/rbacproxy/). */
async function kubeRbacProxy(m: FlagModules, translateArgs: TranslateArgs, argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    hardenIntrinsics();
    process.stdout.write(
      "Usage: gatehouse kube-rbac-proxy [kube-rbac-proxy flags]\n\nkube-rbac-proxy's flags with their meaning (gateway/rbacproxy/README.md); a flag Gatehouse does not support is refused by name.\n",
    );
    return 0;
  }
  // kube-rbac-proxy generates a serving certificate when given none: the dev PKI, in a directory of this process's own.
  const translated = translateArgs(
    argv,
    argv.some((a) => a.startsWith('--tls-cert-file')) ? undefined : mkdtempSync(join(tmpdir(), 'gatehouse-kube-rbac-proxy-')),
  );
  if ('error' in translated) {
    hardenIntrinsics();
    process.stderr.write(cliErrorLine(translated.error));
    return 1;
  }
  const parsed = m.parseServeFlags(translated.args);
  if ('error' in parsed) {
    hardenIntrinsics();
    process.stderr.write(cliErrorLine(parsed.error));
    return 1;
  }
  if (parsed.options.upstream === undefined) {
    hardenIntrinsics();
    process.stderr.write(cliErrorLine('--upstream is required'));
    return 1;
  }
  return sidecar(await loaded(sidecarModule()), parsed.options);
}

async function backend(m: FlagModules, kind: BackendKind, argv: string[]): Promise<number> {
  const { wantsHelp, parseServeFlags } = m;
  if (wantsHelp(argv)) {
    hardenIntrinsics();
    process.stdout.write(
      `Usage: gatehouse ${kind} [flags]\n\nThe flags of "gatehouse serve" that a backend process reads (gateway/backendprocess/flags.ts); any other is refused.\n`,
    );
    return 0;
  }
  const parsed = parseServeFlags(argv);
  const { unhonouredFlag, startBackendProcess } = await loaded(backendModules());
  if ('error' in parsed) {
    process.stderr.write(cliErrorLine(parsed.error));
    return 1;
  }
  const unread = unhonouredFlag(kind, argv, parsed.options);
  if (unread) {
    process.stderr.write(cliErrorLine(unread));
    return 1;
  }
  return run(async () => {
    const running = await startBackendProcess(kind, parsed.options, log);
    return { banner: `Gatehouse ${kind} is serving on ${running.url}`, shutdown: running.shutdown };
  });
}

/** The command's modules are loaded, then the intrinsics hardened, then it runs. */
async function main(argv: string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve(await flagModules(), rest);
    case 'certs': {
      const { runCertsCommand } = await loaded(import('../../certs/cli.js'));
      return runCertsCommand(rest);
    }
    case 'kube-rbac-proxy': {
      const [m, { translateArgs }] = await Promise.all([flagModules(), import('../rbacproxy/args.js')]);
      return kubeRbacProxy(m, translateArgs, rest);
    }
    case 'core-backend':
    case 'sample-backend':
      return backend(await flagModules(), command, rest);
    case 'help':
    case '--help':
    case '-h':
      hardenIntrinsics();
      process.stdout.write(`${HELP}\n`);
      return 0;
    default:
      if (command.startsWith('-')) return serve(await flagModules(), argv);
      hardenIntrinsics();
      process.stderr.write(cliErrorLine(`unknown command "${command}": run "gatehouse help"`));
      return 1;
  }
}

/**
 * Every module the command runs on is loaded once this resolves: from here on
 * a write through a built-in prototype throws instead of reaching every object.
 */
async function loaded<T>(modules: Promise<T>): Promise<T> {
  const m = await modules;
  hardenIntrinsics();
  return m;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(cliErrorLine(err));
    process.exit(1);
  },
);
