// The audit's one 'exit' listener (one per log or auditor would pass Node's
// listener warning at ten). When the process ends at once (process.exit, an
// uncaught error), the events auditors hold for the end of the turn are handed
// to their sinks first, then the logs write what they gathered, synchronously.
type Step = () => void;

const handOvers = new Set<Step>();
const writes = new Set<Step>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  process.on('exit', () => {
    for (const f of handOvers) f();
    for (const f of writes) f();
  });
}

/** Runs `f` first when the process exits; the returned function unregisters it. */
export function atExitHandOver(f: Step): () => void {
  install();
  handOvers.add(f);
  return () => {
    handOvers.delete(f);
  };
}

/** Runs `f` when the process exits, after every hand-over; the returned function unregisters it. */
export function atExitWrite(f: Step): () => void {
  install();
  writes.add(f);
  return () => {
    writes.delete(f);
  };
}
