// A free loopback port for a server a test or benchmark starts (bound, read, released).
// GATEHOUSE_PORTS=<low>-<high> keeps them inside a range (sessions sharing one machine
// each get their own); otherwise the kernel picks an ephemeral one.
import { createServer } from 'node:net';

const range = /^(\d+)-(\d+)$/.exec(process.env['GATEHOUSE_PORTS'] ?? '');

function tryListen(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(port, '127.0.0.1', () => {
      const { port: bound } = s.address() as { port: number };
      s.close(() => resolve(bound));
    });
  });
}

export async function freePort(): Promise<number> {
  if (!range) return tryListen(0);
  const low = Number(range[1]);
  const span = Number(range[2]) - low + 1;
  // A random start: processes of one session pick ports concurrently.
  const start = Math.floor(Math.random() * span);
  for (let i = 0; i < span; i++) {
    try {
      return await tryListen(low + ((start + i) % span));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
    }
  }
  throw new Error(`no free port in GATEHOUSE_PORTS=${range[0]}`);
}
