// undici, required on first use rather than imported: its ~200 ms of module
// loading (CPU, loaded machine; bench/startup.ts) is paid by the first remote
// APIService or remote core backend, not by every start of a server that has
// none. undici is CommonJS, so the require is synchronous and the callers stay so.
import { createRequire } from 'node:module';

type Undici = typeof import('undici');
let undici: Undici | undefined;

export function loadUndici(): Undici {
  return (undici ??= createRequire(import.meta.url)('undici') as Undici);
}
