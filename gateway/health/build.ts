// The three health endpoints of a serving process (the gateway, a backend
// process), built from its store check and boot-sequence checks: /healthz
// and /readyz run boot checks as they are, /livez only after the grace
// period (startup is assumed to complete); /readyz also fails from the
// moment shutdown begins.
import { log as logCheck, ping, ShutdownCheck, withStartupGrace, type HealthCheck, type PostStartHook } from './checks.js';
import { HealthEndpoint } from './endpoint.js';

export interface HealthEndpoints {
  readonly healthz: HealthEndpoint;
  readonly livez: HealthEndpoint;
  readonly readyz: HealthEndpoint;
}

export interface HealthInputs {
  /** The storage check, named `etcd` as in kube-apiserver. */
  readonly checkStore: () => Promise<void>;
  /** Post-start hooks and other boot-sequence checks (autoregister-completion). */
  readonly boot: readonly HealthCheck[];
  /** Checks of liveness only (/livez and /healthz, never /readyz): kube's `leaderElection`. */
  readonly live?: readonly HealthCheck[];
  /** --livez-grace-period; 0 runs boot checks in /livez at once. */
  readonly livezGraceMs: number;
  readonly startedAt: number;
  readonly clock: () => number;
  readonly log: (msg: string) => void;
}

export interface Health {
  readonly endpoints: HealthEndpoints;
  /** Begun by shutdown (server/shutdown.ts). */
  readonly shutdown: ShutdownCheck;
}

export function buildHealth(i: HealthInputs): Health {
  const shutdown = new ShutdownCheck();
  const base: HealthCheck[] = [ping(), logCheck(i.clock), { name: 'etcd', check: () => i.checkStore() }];
  const graced = i.boot.map((c) => withStartupGrace(c, i.livezGraceMs, i.startedAt, i.clock));
  return {
    shutdown,
    endpoints: {
      healthz: new HealthEndpoint('healthz', [...base, ...(i.live ?? []), ...i.boot], i.log),
      livez: new HealthEndpoint('livez', [...base, ...(i.live ?? []), ...graced], i.log),
      readyz: new HealthEndpoint('readyz', [...base, ...i.boot, shutdown], i.log),
    },
  };
}

/** Runs the post-start hooks once the server listens; a failed one is logged (its check reports it). */
export function startPostStartHooks(hooks: readonly PostStartHook[], log: (msg: string) => void): void {
  for (const h of hooks) h.start().catch((err: unknown) => log(`post-start hook ${h.name} failed: ${err instanceof Error ? err.message : String(err)}`));
}

/** kube's `leaderElection` check, when the process elects a leader for its controllers. */
export function leaderElectionCheck(core: { readonly leaderElection?: { check(): void } | undefined }): HealthCheck[] {
  const le = core.leaderElection;
  return le ? [{ name: 'leaderElection', check: () => le.check() }] : [];
}
