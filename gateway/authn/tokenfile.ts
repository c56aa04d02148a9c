// Static tokens from --token-auth-file: CSV as kube-apiserver reads it with
// Go's encoding/csv (quoted columns, `""` escapes, blank lines skipped, no
// comment syntax): token, user name, uid, then groups — a column may list
// several as "g1,g2". Tokens never expire; changes need a restart. Tokens are
// looked up by their SHA-256 and compared in constant time.
import { ConfigError } from '../../lib/config/error.js';
import type { UserInfo } from '../../lib/api/meta.js';
import { tokenDigest, type BearerToken, type TokenAuthenticator } from './token.js';
import type { AuthnResult } from './types.js';

/** Go encoding/csv records with the line each starts on; throws a ConfigError naming the line. */
export function parseCsv(text: string, source: string): Array<{ line: number; fields: string[] }> {
  const records: Array<{ line: number; fields: string[] }> = [];
  const s = text.replace(/\r\n/g, '\n');
  let i = 0;
  let line = 1;
  while (i < s.length) {
    if (s[i] === '\n') {
      i++;
      line++;
      continue;
    } // blank line
    const start = line;
    const fields: string[] = [];
    for (;;) {
      let field = '';
      if (s[i] === '"') {
        i++;
        for (;;) {
          if (i >= s.length) throw new ConfigError('extraneous or missing " in quoted-field', { file: source, field: `line ${start}` });
          const c = s[i]!;
          if (c === '"') {
            if (s[i + 1] === '"') {
              field += '"';
              i += 2;
              continue;
            }
            i++;
            break;
          }
          if (c === '\n') line++;
          field += c;
          i++;
        }
        if (i < s.length && s[i] !== ',' && s[i] !== '\n')
          throw new ConfigError('extraneous or missing " in quoted-field', { file: source, field: `line ${line}` });
      } else {
        while (i < s.length && s[i] !== ',' && s[i] !== '\n') {
          if (s[i] === '"') throw new ConfigError('bare " in non-quoted-field', { file: source, field: `line ${line}` });
          field += s[i];
          i++;
        }
      }
      fields.push(field);
      if (i < s.length && s[i] === ',') {
        i++;
        continue;
      }
      break;
    }
    if (i < s.length && s[i] === '\n') {
      i++;
      line++;
    }
    records.push({ line: start, fields });
  }
  return records;
}

export class StaticTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'token-file';
  /** By tokenDigest: the map holds hashes, never tokens, so a lookup's timing says nothing about a token. */
  private readonly byDigest = new Map<string, AuthnResult>();

  /** Parses the file's text; throws a ConfigError naming the file and line. */
  constructor(text: string, source: string, warn: (msg: string) => void = () => undefined) {
    for (const { line, fields } of parseCsv(text, source)) {
      if (fields.length < 3) {
        throw new ConfigError(`must have at least 3 columns (token, user name, uid), found ${fields.length}`, { file: source, field: `line ${line}` });
      }
      const [token, username, uid, ...groupColumns] = fields as [string, string, string, ...string[]];
      if (token === '') {
        warn(`${source}: line ${line}: empty token ignored`);
        continue;
      }
      if (username === '') throw new ConfigError('the user name column is empty', { file: source, field: `line ${line}` });
      const groups = groupColumns.flatMap((c) => c.split(',')).filter((g) => g !== '');
      const key = tokenDigest(token);
      if (this.byDigest.has(key)) warn(`${source}: line ${line}: duplicate token, the later line wins`);
      const user: UserInfo = Object.freeze({ username, ...(uid !== '' ? { uid } : {}), groups: Object.freeze([...new Set(groups)]) as string[] });
      this.byDigest.set(key, Object.freeze({ user, method: this.name }));
    }
  }

  get size(): number {
    return this.byDigest.size;
  }

  authenticateToken(token: BearerToken): Promise<AuthnResult | null> {
    return Promise.resolve(this.byDigest.get(token.digest) ?? null);
  }
}
