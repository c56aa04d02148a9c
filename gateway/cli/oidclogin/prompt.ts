// Questions on the terminal (a password, a pasted code). kubectl hands the
// plugin its stdin when the kubeconfig's interactiveMode allows it; without a
// terminal a line is read from stdin as it comes, so scripts can pipe it.
import { createInterface } from 'node:readline';
import { LoginError } from './provider.js';

export async function ask(question: string, opts: { secret?: boolean; what: string }): Promise<string> {
  const input = process.stdin;
  if (input.destroyed || (!input.isTTY && input.readableEnded)) throw new LoginError(`${opts.what} is needed but there is no terminal to ask on`);
  process.stderr.write(question);
  // Held only while a question waits: an open stdin must not keep the plugin alive once it has answered kubectl.
  (input as unknown as { ref?: () => void }).ref?.();
  const tty = input.isTTY === true;
  if (tty && opts.secret) input.setRawMode(true);
  try {
    const answer = tty && opts.secret ? await readHidden(input) : await readLine(input);
    if (answer === undefined) throw new LoginError(`${opts.what} is needed but stdin ended before it was given`);
    return answer;
  } finally {
    if (tty && opts.secret) {
      input.setRawMode(false);
      process.stderr.write('\n');
    }
    input.pause();
    (input as unknown as { unref?: () => void }).unref?.();
  }
}

function readLine(input: NodeJS.ReadStream): Promise<string | undefined> {
  return new Promise((resolve) => {
    const rl = createInterface({ input, terminal: false });
    let done = false;
    rl.once('line', (line) => {
      done = true;
      rl.close();
      resolve(line.trim());
    });
    rl.once('close', () => {
      if (!done) resolve(undefined);
    });
  });
}

/** Reads up to Enter without echo (raw mode): backspace edits, Ctrl-C and Ctrl-D end with nothing. */
function readHidden(input: NodeJS.ReadStream): Promise<string | undefined> {
  return new Promise((resolve) => {
    let s = '';
    const onData = (buf: Buffer): void => {
      for (const ch of buf.toString('utf8')) {
        if (ch === '\r' || ch === '\n') return end(s);
        if (ch === '\u0003' || ch === '\u0004') return end(undefined);
        if (ch === '\u007f' || ch === '\b') s = s.slice(0, -1);
        else s += ch;
      }
    };
    const end = (v: string | undefined): void => {
      input.off('data', onData);
      resolve(v);
    };
    input.on('data', onData);
    input.resume();
  });
}
