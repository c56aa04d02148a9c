// A started test server and the machine's kubectl bound to it, for one
// describe block of the kubectl workload tests: started before its tests,
// closed after them. Suites skip when kubectl is not installed.
import { after, before } from 'node:test';
import { startTestServer, type StartOptions, type TestServer } from './server.js';
import { findKubectl, Kubectl } from '../e2e/helpers.js';

export const KUBECTL = findKubectl();
/** The describe option of a suite that needs kubectl. */
export const NEEDS_KUBECTL = { skip: KUBECTL ? false : 'kubectl is not installed' } as const;

export interface KubectlServer {
  /** Set once the suite's `before` has run. */
  readonly s: TestServer;
  readonly k: Kubectl;
}

/** Registers the suite's before/after hooks; read `s` and `k` inside tests. */
export function kubectlServer(opts: StartOptions = {}): KubectlServer {
  let server: TestServer | undefined;
  let kubectl: Kubectl | undefined;
  before(async () => {
    server = await startTestServer(opts);
    kubectl = new Kubectl(KUBECTL!, server.kubeconfig);
  });
  after(async () => {
    await server?.close();
  });
  return {
    get s() {
      if (!server) throw new Error('the test server is not started yet');
      return server;
    },
    get k() {
      if (!kubectl) throw new Error('the test server is not started yet');
      return kubectl;
    },
  };
}

/** The cells of `kubectl get` output, one row per line, split on kubectl's column gaps (two spaces or more). */
export function tableRows(out: string): string[][] {
  return out
    .trim()
    .split('\n')
    .map((l) => l.trim().split(/\s{2,}/));
}
