// Starts a real Gatehouse server in-process over TLS on a free loopback
// port, with its own data directory and dev PKI, and a client that speaks
// as the admin (system:masters) or as nobody.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseServeFlags } from '../../gateway/config/flags.js';
import { startServer, type AppHooks, type RunningServer } from '../../gateway/server/app.js';
import { devPkiPaths } from '../../certs/devpki.js';
import { HttpsClient } from './client.js';
import { testStorage } from '../store/fixtures/redis-env.js';
import { freePort } from './ports.js';

export interface TestServer {
  readonly running: RunningServer;
  readonly url: string;
  readonly port: number;
  readonly dataDir: string;
  readonly kubeconfig: string;
  /** Client with the admin certificate (system:masters). */
  readonly admin: HttpsClient;
  /** Client with no credentials (anonymous). */
  readonly anonymous: HttpsClient;
  readonly logs: string[];
  close(): Promise<void>;
}

export { freePort };

/**
 * Flags for a server whose store nothing writes in the background, for a test that needs the store's
 * revision to stay put between two reads (a list's resourceVersion, a watch at the next revision). The only
 * periodic writers are the two lease renewals (kube-system/gatehouse-controllers every 2 s, the server's
 * identity lease every 10 s): the controllers run without leader election, the identity lease is renewed hourly.
 */
export const NO_BACKGROUND_WRITES: readonly string[] = ['--leader-elect=false', '--identity-lease-renew-interval-seconds=3599'];

export interface StartOptions {
  flags?: string[];
  hooks?: Partial<AppHooks>;
  dataDir?: string;
}

export async function startTestServer(opts: StartOptions = {}): Promise<TestServer> {
  const dataDir = opts.dataDir ?? (await mkdtemp(join(tmpdir(), 'gatehouse-test-')));
  const port = await freePort();
  const storage = testStorage(); // GATEHOUSE_TEST_STORAGE=redis runs the server on Redis
  // Tests that count the objects of a namespace need it empty: the controllers that fill every
  // namespace (ServiceAccount default, ConfigMap kube-root-ca.crt) run only where a test names them.
  // Without the serviceaccount controller no `default` account exists, and kube's ServiceAccount admission would refuse every pod.
  const controllers = opts.flags?.some((f) => f.startsWith('--controllers'))
    ? []
    : ['--controllers=*,-serviceaccount,-root-ca-cert-publisher', '--disable-admission-plugins=ServiceAccount'];
  const parsed = parseServeFlags(['--secure-port', String(port), '--data-dir', dataDir, ...storage.flags, ...controllers, ...(opts.flags ?? [])]);
  if ('error' in parsed) throw new Error(parsed.error);
  const logs: string[] = [];
  // Spans still buffered at close reach a test's receiver even on a loaded CI machine (the serve default is 2 s).
  const running = await startServer(parsed.options, { log: (m) => logs.push(m), tooLargeWaitMs: 300, tracingShutdownMs: 10_000, ...opts.hooks });
  const pki = devPkiPaths(dataDir);
  const [ca, cert, key] = await Promise.all([readFile(pki.caCert, 'utf8'), readFile(pki.adminCert, 'utf8'), readFile(pki.adminKey, 'utf8')]);
  const admin = new HttpsClient(running.url, { ca, cert, key });
  const anonymous = new HttpsClient(running.url, { ca });
  await waitReady(admin);
  return {
    running,
    url: running.url,
    port,
    dataDir,
    kubeconfig: pki.kubeconfig,
    admin,
    anonymous,
    logs,
    async close() {
      admin.close();
      anonymous.close();
      await running.shutdown('test');
      await storage.cleanup();
      if (!opts.dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Post-start hooks (default namespaces) run after listen; tests start once they are done. */
export async function waitReady(client: HttpsClient, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await client.request('GET', '/readyz').catch(() => undefined);
    if (r?.status === 200) return;
    if (Date.now() > deadline) throw new Error(`server not ready: ${r?.status} ${r?.text}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}
