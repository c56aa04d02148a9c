// The unverified `iss` of a compact JWS, to pick the authenticator before any
// signature work. Anything that is not header.payload.signature with a JSON
// object payload carrying a string `iss` is "not a JWT of ours".

const B64URL = /^[A-Za-z0-9_-]*$/;

export function unverifiedIssuer(token: string, maxBytes: number): string | undefined {
  if (token.length > maxBytes) return undefined;
  const first = token.indexOf('.');
  const second = first < 0 ? -1 : token.indexOf('.', first + 1);
  if (first <= 0 || second < 0 || token.indexOf('.', second + 1) >= 0) return undefined;
  const payload = token.slice(first + 1, second);
  if (payload === '' || !B64URL.test(payload)) return undefined;
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (claims === null || typeof claims !== 'object' || Array.isArray(claims)) return undefined;
  const iss = (claims as { iss?: unknown }).iss;
  return typeof iss === 'string' ? iss : undefined;
}
