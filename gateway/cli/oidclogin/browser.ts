// Opening a URL for the person at the keyboard: --browser-command (one
// executable, the URL its argument, as kubelogin runs it), else the
// platform's opener; the URL is always printed too, for a headless session.
import { spawn } from 'node:child_process';
import type { LoginOptions } from './flags.js';

export function openUrl(o: LoginOptions, url: string, warn: (m: string) => void): void {
  if (o.skipOpenBrowser) {
    warn(`Please visit the following URL in your browser: ${url}`);
    return;
  }
  const cmd = o.browserCommand ?? (process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open');
  warn(`Opening the browser for login (if it does not open, visit ${url})`);
  const fail = (why: string): void => warn(`note: the browser command ${cmd} failed (${why}); visit the URL above`);
  try {
    const child = spawn(cmd, [url], { stdio: 'ignore', detached: true });
    child.on('error', (err: NodeJS.ErrnoException) => fail(err.code ?? err.message));
    child.unref();
  } catch (err) {
    fail(String(err));
  }
}
