// Closing a server a test started, from `after`: safe when `before` failed
// before the server existed or listened (a bare `new Promise((r) =>
// server?.close(r))` then never resolves and the run waits forever).
interface Closable {
  readonly listening: boolean;
  close(callback: () => void): unknown;
  closeAllConnections?(): void;
}

/** Closes `server` and its open connections; resolves at once when there is none or it does not listen. */
export function closeServer(server: Closable | undefined): Promise<void> {
  if (server === undefined || !server.listening) return Promise.resolve();
  server.closeAllConnections?.();
  return new Promise((resolve) => server.close(() => resolve()));
}
