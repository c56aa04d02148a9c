// What the warm-cache path needs to know of a cached ID token without any
// crypto: its claims and whether it is still good. It was verified (issuer,
// audience, expiry, nonce, signature) before it was cached.
export type Claims = Record<string, unknown>;

/** The payload of a compact JWS, or undefined when it is not one. */
export function claimsOf(jwt: string): Claims | undefined {
  const parts = jwt.split('.');
  if (parts.length !== 3) return undefined;
  try {
    const v: unknown = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Claims) : undefined;
  } catch {
    return undefined;
  }
}

/** Seconds before `exp` that a token counts as expired, so kubectl never sends one that lapses in flight. */
export const EXPIRY_MARGIN_SEC = 10;

/** The token's `exp` (seconds since the epoch) when it is a number. */
export function expOf(claims: Claims): number | undefined {
  const exp = Object.hasOwn(claims, 'exp') ? claims['exp'] : undefined;
  return typeof exp === 'number' && Number.isFinite(exp) ? exp : undefined;
}

export function isFresh(jwt: string, nowMs: number): boolean {
  const claims = claimsOf(jwt);
  const exp = claims && expOf(claims);
  return exp !== undefined && exp - EXPIRY_MARGIN_SEC > nowMs / 1000;
}
