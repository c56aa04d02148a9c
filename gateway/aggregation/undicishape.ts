// undici's Clients made with their final shape. A Client gets three
// properties only after it is built: `connecting` and `socket` when it
// connects, a Pool's `needDrain` when the Pool first finds it busy (never,
// for the probes' one-connection Clients), in an order that depends on
// timing. Every step and every order is another hidden class: the client
// sites every request passes (undici's `kSize`/`kRunning`/`kPending`/`kBusy`
// getters, inlined into `resumeH1` and `_resume`) saw more than the four
// classes V8 specializes for and fell back to its generic keyed load
// (`KeyedLoadIC_Megamorphic`, ~190 calls per proxied GET). Here every Client
// is handed out with the three set to the values undici treats as unset
// (`false`, `null`, `false`: every read of them is a truthiness test), so
// all Clients share one class from their start (figures:
// docs/decisions/2026-11-30-proxied-get-shapes.md).
//
// The symbols are undici's own, not part of its API: `connecting` and
// `socket` from lib/core/symbols.js, the Pool's `needDrain` an own symbol of
// every Pool. If a release renames them `uniformClients` gives up (plain
// Clients, the behaviour and cost before) and test/aggregation says so.
import { createRequire } from 'node:module';
import type { Client, Dispatcher } from 'undici';
import { loadUndici } from './undici.js';

interface Shape {
  readonly connecting: symbol;
  readonly socket: symbol;
  readonly poolNeedDrain: symbol;
}

let shape: Shape | null | undefined;

/** undici's three symbols, or null when this undici does not have them. */
export function clientShape(): Shape | null {
  if (shape !== undefined) return shape;
  const { Pool } = loadUndici();
  const core = createRequire(import.meta.url)('undici/lib/core/symbols.js') as Record<string, unknown>;
  // A Pool connects nothing until its first dispatch: this one only shows its own symbols.
  const own = Object.getOwnPropertySymbols(new Pool('http://127.0.0.1'));
  const poolNeedDrain = own.find((s) => s.description === 'needDrain');
  const connecting = core['kConnecting'];
  const socket = core['kSocket'];
  shape = typeof connecting === 'symbol' && typeof socket === 'symbol' && poolNeedDrain !== undefined ? { connecting, socket, poolNeedDrain } : null;
  return shape;
}

/** A Client with its late properties set to their unset values, so it has the class every Client ends with. */
function shaped(origin: URL | string, opts: object): Client {
  const c = new (loadUndici().Client)(origin, opts);
  const s = clientShape();
  if (s !== null) {
    const o = c as unknown as Record<symbol, unknown>;
    o[s.connecting] = false;
    o[s.poolNeedDrain] = false;
    o[s.socket] = null;
  }
  return c;
}

/**
 * The `factory` of an undici Agent whose Clients share one class: a Pool per
 * origin (a one-connection Client when `connections` is 1, as undici's own
 * factory), each making its Clients with `shaped`.
 */
export function uniformClients(origin: URL | string, opts: object): Dispatcher {
  if ((opts as { connections?: number }).connections === 1) return shaped(origin, opts);
  return new (loadUndici().Pool)(origin, { ...opts, factory: shaped });
}
