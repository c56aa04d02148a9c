// `gatehouse <command>`: serve (the default of `npm start`), certs, help.
// Invalid input ends the process with one clear line and exit code 1.
import { runCertsCommand } from '../../certs/cli.js';
import { cliErrorLine } from '../../lib/config/error.js';
import { parseServeFlags, usage, wantsHelp, type ServeOptions } from '../config/flags.js';
import { startServer } from '../server/app.js';
import { startBackendProcess, type BackendKind } from '../aggregation/backendmain.js';
import { startSidecar } from '../sidecar/index.js';
import { hardenIntrinsics } from './harden.js';

const log = (msg: string): void => {
  process.stderr.write(`${new Date().toISOString()} ${msg}\n`);
};

const HELP = `Usage: gatehouse <command> [flags]

Commands:
  serve          serve the Kubernetes-compatible API (default of npm start)
  certs          generate the dev PKI and client kubeconfigs (gatehouse certs help)
  core-backend   the core backend as its own HTTPS process behind a gateway (request-header authentication)
  sample-backend the sample aggregated backend (samples.gatehouse.dev/v1 Widgets) as its own HTTPS process
  help           this text

Run "gatehouse serve --help" for the flags of serve.`;

async function serve(argv: string[]): Promise<number> {
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
  if (opts.upstream !== undefined) return sidecar(opts);
  let running;
  try {
    running = await startServer(opts, { log });
  } catch (err) {
    process.stderr.write(cliErrorLine(err, 'cannot start'));
    return 1;
  }
  const lines = [`Gatehouse is serving on ${running.url} (storage: ${opts.storageBackend}, data: ${opts.dataDir})`];
  if (running.kubeconfig) {
    lines.push('Connect with kubectl:', `  kubectl --kubeconfig ${running.kubeconfig} get namespaces`, `  export KUBECONFIG=${running.kubeconfig}`);
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  await new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      void running.shutdown(signal).then(resolve);
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
  return 0;
}

/** `gatehouse serve --upstream=<url>`: sidecar mode (gateway/sidecar/). */
async function sidecar(opts: ServeOptions): Promise<number> {
  let running;
  try {
    running = await startSidecar(opts, { log });
  } catch (err) {
    process.stderr.write(cliErrorLine(err, 'cannot start'));
    return 1;
  }
  process.stdout.write(`Gatehouse sidecar is serving on ${running.url}, proxying to ${running.upstream}\n`);
  await new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      void running.shutdown(signal).then(resolve);
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
  return 0;
}

async function backend(kind: BackendKind, argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(`Usage: gatehouse ${kind} [flags]\n\nThe flags of "gatehouse serve"; see gateway/aggregation/backendmain.ts for the ones read.\n`);
    return 0;
  }
  const parsed = parseServeFlags(argv);
  if ('error' in parsed) {
    process.stderr.write(cliErrorLine(parsed.error));
    return 1;
  }
  let running;
  try {
    running = await startBackendProcess(kind, parsed.options, log);
  } catch (err) {
    process.stderr.write(cliErrorLine(err, 'cannot start'));
    return 1;
  }
  process.stdout.write(`Gatehouse ${kind} is serving on ${running.url}\n`);
  await new Promise<void>((resolve) => {
    const onSignal = (signal: string) => {
      void running.shutdown(signal).then(resolve);
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  });
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const [command = 'serve', ...rest] = argv;
  switch (command) {
    case 'serve':
      return serve(rest);
    case 'certs':
      return runCertsCommand(rest);
    case 'core-backend':
    case 'sample-backend':
      return backend(command, rest);
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(`${HELP}\n`);
      return 0;
    default:
      if (command.startsWith('-')) return serve(argv);
      process.stderr.write(cliErrorLine(`unknown command "${command}": run "gatehouse help"`));
      return 1;
  }
}

// Every module is loaded by now (no import is dynamic): from here on a write
// through a built-in prototype throws instead of reaching every object.
hardenIntrinsics();
main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(cliErrorLine(err));
    process.exit(1);
  },
);
