// The ExecCredential kubectl reads from the plugin's stdout, in the version
// kubectl asked for in KUBERNETES_EXEC_INFO (v1 when it did not say).
import { claimsOf, expOf } from './idtoken.js';

const VERSIONS = new Set(['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1']);

function requestedVersion(execInfo: string | undefined): string {
  if (!execInfo) return 'client.authentication.k8s.io/v1';
  try {
    const v: unknown = JSON.parse(execInfo);
    const api = typeof v === 'object' && v !== null && Object.hasOwn(v, 'apiVersion') ? (v as Record<string, unknown>)['apiVersion'] : undefined;
    if (typeof api === 'string' && VERSIONS.has(api)) return api;
  } catch {
    // kubectl writes valid JSON; anything else is answered in v1.
  }
  return 'client.authentication.k8s.io/v1';
}

export function execCredential(idToken: string, execInfo: string | undefined): string {
  const claims = claimsOf(idToken);
  const exp = claims && expOf(claims);
  const status: Record<string, string> = { token: idToken };
  // Go's metav1.Time: RFC 3339 in seconds, UTC.
  if (exp !== undefined) status['expirationTimestamp'] = new Date(exp * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return `${JSON.stringify({ kind: 'ExecCredential', apiVersion: requestedVersion(execInfo), spec: { interactive: false }, status })}\n`;
}
