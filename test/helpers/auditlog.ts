// An audit log read while the server may be writing it: its whole lines only.
// A large write can be seen half done (the thread pool writes it while the
// test reads), so what follows the last newline is not a line yet.
import { readFile } from 'node:fs/promises';

/** The log's complete lines ('' for a file not there yet). */
export async function completeLines(file: string): Promise<string[]> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const lines = text.split('\n');
  lines.pop(); // '' after a final newline, else a line still being written
  return lines.filter((l) => l !== '');
}
