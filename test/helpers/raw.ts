// Raw bytes over one TLS connection, for what a well-behaved client cannot
// send (smuggling attempts, odd request lines) and for upgrades: the bytes
// go out as written and everything the server sends comes back as text.
import { connect } from 'node:tls';

export interface RawTarget {
  port: number;
  ca: string;
  cert?: string;
  key?: string;
}
export interface RawAnswer {
  text: string;
  closed: boolean;
}

/**
 * Writes `bytes`, then collects the answer until the server closes, or until
 * `done(text)` says enough (the socket is then destroyed), or `waitMs` passes.
 */
export function rawExchange(
  t: RawTarget,
  bytes: string,
  o: { done?: (text: string, write: (s: string) => void) => boolean; waitMs?: number } = {},
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port: t.port, ca: t.ca, ...(t.cert && t.key ? { cert: t.cert, key: t.key } : {}), servername: 'localhost' }, () =>
      s.write(bytes),
    );
    let text = '';
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      s.destroy();
      resolve({ text, closed });
    };
    s.setEncoding('utf8');
    s.on('data', (d: string) => {
      text += d;
      if (o.done?.(text, (more) => s.write(more))) finish(false);
    });
    s.on('close', () => finish(true));
    s.on('error', (err) => (text ? finish(true) : reject(err)));
    const timer = setTimeout(() => finish(false), o.waitMs ?? 10_000);
    timer.unref();
  });
}

/** An upgrade request (`Upgrade: echo`): after a 101, sends `ping` and ends once it echoes back. */
export function upgradeRoundTrip(t: RawTarget, path: string): Promise<RawAnswer> {
  return rawExchange(t, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n`, {
    done: (text, write) => {
      if (text.includes('ping')) return true;
      if (text.startsWith('HTTP/1.1 101') && text.includes('\r\n\r\n')) write('ping');
      return false;
    },
  });
}
