// `gatehouse <command>`: serve (the default of `npm start`), certs, help.
// Invalid input ends the process with one clear line and exit code 1.
// Each command loads only its own modules (the server's take seconds to load
// on a busy machine; `help` and `certs` need none of them), all of them before
// the intrinsics are hardened.
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

/** The modules `serve` and the backend processes run on, loaded once the command is known. */
async function serverModules() {
  const [flags, app, backendStart, backendFlags, sidecarMod] = await Promise.all([
    import('../config/flags.js'),
    import('../server/app.js'),
    import('../backendprocess/start.js'),
    import('../backendprocess/flags.js'),
    import('../sidecar/index.js'),
  ]);
  return {
    parseServeFlags: flags.parseServeFlags,
    usage: flags.usage,
    wantsHelp: flags.wantsHelp,
    startServer: app.startServer,
    startBackendProcess: backendStart.startBackendProcess,
    unhonouredFlag: backendFlags.unhonouredFlag,
    startSidecar: sidecarMod.startSidecar,
  };
}
type ServerModules = Awaited<ReturnType<typeof serverModules>>;

async function serve(m: ServerModules, argv: string[]): Promise<number> {
  const { wantsHelp, usage, parseServeFlags, startServer } = m;
  if (wantsHelp(argv)) {
    process.stdout.write(`${usage()}\n`);
    return 0;
  }
  const parsed = parseServeFlags(argv);
  if ('error' in parsed) {
    process.stderr.write(cliErrorLine(parsed.error));
    return 1;
  }
  const opts = parsed.options;
  if (opts.upstream !== undefined) return run(() => sidecar(m, opts));
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
async function sidecar(m: ServerModules, opts: ServeOptions): Promise<Started> {
  const running = await m.startSidecar(opts, { log });
  return { banner: `Gatehouse sidecar is serving on ${running.url}, proxying to ${running.upstream}`, shutdown: running.shutdown };
}

/** `gatehouse kube-rbac-proxy [its flags]`: sidecar mode from kube-rbac-proxy's command line (gateway/rbacproxy/). */
async function kubeRbacProxy(m: ServerModules, translateArgs: TranslateArgs, argv: string[]): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
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
    process.stderr.write(cliErrorLine(translated.error));
    return 1;
  }
  const parsed = m.parseServeFlags(translated.args);
  if ('error' in parsed) {
    process.stderr.write(cliErrorLine(parsed.error));
    return 1;
  }
  if (parsed.options.upstream === undefined) {
    process.stderr.write(cliErrorLine('--upstream is required'));
    return 1;
  }
  const opts = parsed.options;
  return run(() => sidecar(m, opts));
}

async function backend(m: ServerModules, kind: BackendKind, argv: string[]): Promise<number> {
  const { wantsHelp, parseServeFlags, unhonouredFlag, startBackendProcess } = m;
  if (wantsHelp(argv)) {
    process.stdout.write(
      `Usage: gatehouse ${kind} [flags]\n\nThe flags of "gatehouse serve" that a backend process reads (gateway/backendprocess/flags.ts); any other is refused.\n`,
    );
    return 0;
  }
  const parsed = parseServeFlags(argv);
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
      return serve(await loaded(serverModules()), rest);
    case 'certs': {
      const { runCertsCommand } = await loaded(import('../../certs/cli.js'));
      return runCertsCommand(rest);
    }
    case 'kube-rbac-proxy': {
      const [m, { translateArgs }] = await loaded(Promise.all([serverModules(), import('../rbacproxy/args.js')]));
      return kubeRbacProxy(m, translateArgs, rest);
    }
    case 'core-backend':
    case 'sample-backend':
      return backend(await loaded(serverModules()), command, rest);
    case 'help':
    case '--help':
    case '-h':
      hardenIntrinsics();
      process.stdout.write(`${HELP}\n`);
      return 0;
    default:
      if (command.startsWith('-')) return serve(await loaded(serverModules()), argv);
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
