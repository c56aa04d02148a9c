// One configuration's chain: each spec made by its mode's factory, in order,
// each counted by decision (instrumented.ts), kept with what must be closed
// when the chain retires. A spec that fails closes what the earlier ones opened.
import { AuthorizerChain } from './chain.js';
import type { AuthorizationConfig, AuthorizerSpec } from './config.js';
import { instrumented } from './instrumented.js';
import { factoryFor, type ModeContext } from './modes.js';
import type { Authorizer } from './types.js';

export interface ConfiguredAuthorizer {
  readonly type: AuthorizerSpec['type'];
  readonly name: string;
  readonly authorizer: Authorizer;
}

export interface ConfiguredChain {
  /** The configured authorizers' union ("no opinion" kept, so the bypass before it and the caller decide). */
  readonly authorizer: Authorizer;
  readonly parts: readonly ConfiguredAuthorizer[];
  close(): void;
}

/** `fromFile`: specs are named `authorizers[i]` in messages, else `--authorization-mode`. */
export async function buildChain(config: AuthorizationConfig, fromFile: boolean, context: Omit<ModeContext, 'index' | 'closers'>): Promise<ConfiguredChain> {
  const closers: Array<() => void> = [];
  const close = () => {
    for (const c of closers) c();
  };
  try {
    const parts: ConfiguredAuthorizer[] = [];
    for (const [i, spec] of config.authorizers.entries()) {
      const c: ModeContext = { ...context, index: fromFile ? i : undefined, closers };
      parts.push({ type: spec.type, name: spec.name, authorizer: await factoryFor(spec.type, c.index)(spec, c) });
    }
    const chain = new AuthorizerChain(parts.map((p) => instrumented(p.type, p.name, p.authorizer)));
    return {
      authorizer: { name: 'authorizers', delegates: true, authorize: (a, trace) => chain.evaluate(a, trace) },
      parts: Object.freeze(parts),
      close,
    };
  } catch (err) {
    close();
    throw err;
  }
}
