// Runs the leader-only controllers (kube-controller-manager's) while this
// process leads: started when it acquires the lease, stopped the moment it
// loses it, started again if it wins later. Without an elector
// (--leader-elect=false) they simply run. Each controller keeps its
// post-start hook, which passes once the controller started here or the
// first election attempt found another leader: /readyz never waits on
// leadership.
import type { LeaderElector } from './elector.js';

export interface LeaderOnlyController {
  readonly name: string;
  start(): Promise<void>;
  stop(): void;
}

export class LeaderOnlyControllers {
  private readonly members: LeaderOnlyController[] = [];
  private readonly started = new Map<string, Promise<void>>();
  private running = false;

  constructor(
    private readonly elector: LeaderElector | undefined,
    private readonly log: (msg: string) => void,
  ) {}

  add(c: LeaderOnlyController): void {
    this.members.push(c);
  }

  /** Every member's start (on acquiring the lease). */
  startAll(): void {
    if (this.running) return;
    this.running = true;
    this.log(`leader-only controllers starting: ${this.members.map((m) => m.name).join(', ')}`);
    for (const m of this.members) {
      const p = m.start();
      p.catch((err: unknown) => this.log(`${m.name}: start failed: ${err instanceof Error ? err.message : String(err)}`));
      this.started.set(m.name, p);
    }
  }

  /** Every member stopped (on losing the lease, at shutdown). */
  stopAll(): void {
    if (!this.running) return;
    this.running = false;
    for (const m of this.members) m.stop();
    this.started.clear();
    this.log('leader-only controllers stopped');
  }

  /** The post-start hook of one member. */
  hook(name: string): () => Promise<void> {
    return async () => {
      if (!this.elector) {
        this.startOne(name);
      } else if (!(await this.elector.firstAttempt)) {
        return;
      }
      await this.started.get(name);
    };
  }

  /** Without an elector each member starts with its own hook, as before leader election existed. */
  private startOne(name: string): void {
    this.running = true;
    const m = this.members.find((c) => c.name === name);
    if (m && !this.started.has(name)) this.started.set(name, m.start());
  }
}
