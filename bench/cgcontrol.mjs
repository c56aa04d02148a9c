// callgrind's counters zeroed ('-z') and dumped ('-d') around a measured window, asked by the process valgrind
// runs (cg-gets.mjs, cg-list.mjs). The event loop is kept busy meanwhile so that valgrind reads the command. The
// dump's command is started before the window and waits for a line: the window then holds a pipe write, not node's
// spawn (its argument and environment copies, ~3k instructions per GET at N=1000).
import { execFile, spawn } from 'node:child_process';

let dumper;

export async function callgrindControl(flag) {
  const tick = setInterval(() => {}, 5);
  try {
    if (flag === '-z') {
      dumper = spawn('sh', ['-c', `read _ && exec callgrind_control -d ${process.pid}`], { stdio: ['pipe', 'ignore', 'inherit'] });
      await new Promise((res, rej) => execFile('callgrind_control', [flag, String(process.pid)], (err) => (err ? rej(err) : res())));
    } else {
      const ended = new Promise((res, rej) => dumper.once('exit', (code) => (code === 0 ? res() : rej(new Error(`callgrind_control -d: ${code}`)))));
      dumper.stdin.end('\n');
      await ended;
    }
  } finally {
    clearInterval(tick);
  }
}
