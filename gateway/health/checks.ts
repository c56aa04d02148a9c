// Named health checks behind /livez and /readyz (and the deprecated /healthz).
// A check resolves when healthy and throws (with a reason for the log) when not.
export interface HealthCheck {
  readonly name: string;
  check(): void | Promise<void>;
}

export function ping(): HealthCheck {
  return { name: 'ping', check: () => undefined };
}

/** Fails when the event loop has not turned for a while: a blocked process cannot log or serve. */
export function log(clock: () => number = Date.now): HealthCheck {
  let last = clock();
  setInterval(() => {
    last = clock();
  }, 1000).unref();
  return {
    name: 'log',
    check: () => {
      if (clock() - last > 10_000) throw new Error('the event loop has been blocked for over 10s');
    },
  };
}

/** A post-start hook: a task run once the server listens; its check passes when it finished. */
export class PostStartHook implements HealthCheck {
  readonly name: string;
  private state: 'pending' | 'done' | Error = 'pending';
  constructor(
    hookName: string,
    private readonly run: () => Promise<void>,
  ) {
    this.name = `poststarthook/${hookName}`;
  }
  async start(): Promise<void> {
    try {
      await this.run();
      this.state = 'done';
    } catch (err) {
      this.state = err instanceof Error ? err : new Error(String(err));
      throw this.state;
    }
  }
  get finished(): boolean {
    return this.state === 'done';
  }
  check(): void {
    if (this.state === 'pending') throw new Error('not finished');
    if (this.state instanceof Error) throw this.state;
  }
}

/** Passes until shutdown begins; makes /readyz fail at once on SIGTERM. */
export class ShutdownCheck implements HealthCheck {
  readonly name = 'shutdown';
  private shuttingDown = false;
  #draining = false;
  begin(): void {
    this.shuttingDown = true;
  }
  /** The shutdown delay is over: requests that arrive now are turned away (429). */
  drain(): void {
    this.#draining = true;
  }
  get draining(): boolean {
    return this.#draining;
  }
  check(): void {
    if (this.shuttingDown) throw new Error('process is shutting down');
  }
}

/**
 * A boot-sequence check as /livez runs it: within the grace period after
 * start it passes (startup is assumed to complete), afterwards it is run.
 */
export function withStartupGrace(check: HealthCheck, graceMs: number, startedAt: number, clock: () => number = Date.now): HealthCheck {
  return {
    name: check.name,
    check: () => (clock() - startedAt < graceMs ? undefined : check.check()),
  };
}
