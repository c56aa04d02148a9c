// `Warning: 299 - "…"` response headers, bounded as kube-apiserver bounds
// them (its warning recorder): each text once per response; while the texts
// fit in 4,096 runes they go out whole, past that every text is cut to 256
// runes, and once the cut ones fill the budget again the rest are dropped.
// Without this a body with 300,000 duplicate keys made a 7 MB header that no
// client reads (Node's own limit is 16 KiB).
import type { Exchange } from './exchange.js';

const TOTAL_RUNES = 4 * 1024;
const ITEM_RUNES = 256;

/** One response's warnings so far (kept on its Exchange). */
export interface WarningRecorder {
  readonly seen: Set<string>;
  readonly ordered: string[];
  written: number;
  truncating: boolean;
}

const runes = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};
const cut = (s: string): string => (runes(s) > ITEM_RUNES ? [...s].slice(0, ITEM_RUNES).join('') : s);
const header = (text: string): string => `299 - ${JSON.stringify(text)}`;

/** Adds warnings to a response whose headers are not sent yet. */
export function addWarnings(x: Exchange, texts: readonly string[]): void {
  const res = x.res;
  if (texts.length === 0 || res.headersSent) return;
  const r = (x.warnings ??= { seen: new Set(), ordered: [], written: 0, truncating: false });
  for (const raw of texts) {
    if (raw === '' || (r.truncating && r.written >= TOTAL_RUNES)) continue;
    if (r.seen.has(raw)) continue;
    r.seen.add(raw);
    r.ordered.push(raw);
    const text = r.truncating ? cut(raw) : raw;
    const len = runes(text);
    if (r.truncating || r.written + len <= TOTAL_RUNES) {
      r.written += len;
      res.appendHeader('Warning', header(text));
      continue;
    }
    // Over budget: start again with every text so far cut short.
    r.truncating = true;
    r.written = 0;
    res.removeHeader('Warning');
    for (const w of r.ordered) {
      const c = cut(w);
      r.written += runes(c);
      res.appendHeader('Warning', header(c));
    }
  }
}
