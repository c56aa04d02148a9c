// kube's webhook.ValidateWebhookURL (k8s.io/apiserver/pkg/util/webhook): the
// URL a webhook is called at — CRD conversion webhooks, and the token and
// authorization webhooks' kubeconfig servers — is https, names a host, and
// carries no user info (credentials there are readable by anyone who can read
// the object), no query and no fragment.
import { cause, type StatusCause } from './status.js';

const FORM = '; desired format: https://host[/path]';
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

interface Problem {
  /** Absent: kube reports it as a required value. */
  readonly value?: string;
  readonly detail: string;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

function problems(url: string, forceHttps: boolean): Problem[] {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    // Go's url.Parse takes a relative reference (no scheme, no host) that WHATWG refuses; kube then reports both.
    if (!SCHEME.test(url)) {
      return [
        ...(forceHttps ? [{ value: '', detail: `'https' is the only allowed URL scheme${FORM}` }] : []),
        { value: '', detail: `host must be specified${FORM}` },
      ];
    }
    return [{ detail: `url must be a valid URL: parse ${JSON.stringify(url)}: invalid URL${FORM}` }];
  }
  const out: Problem[] = [];
  const scheme = u.protocol.slice(0, -1);
  if (forceHttps && scheme !== 'https') out.push({ value: scheme, detail: `'https' is the only allowed URL scheme${FORM}` });
  if (u.host === '') out.push({ value: '', detail: `host must be specified${FORM}` });
  // An `@` before the host with an empty user (`https://@host`) is user info to Go too.
  if (u.username !== '' || u.password !== '' || /^[^/]*\/\/[^/?#]*@/.test(url)) {
    const user = safeDecode(u.username) + (u.password !== '' ? `:${safeDecode(u.password)}` : '');
    out.push({ value: user, detail: 'user information is not permitted in the URL' });
  }
  if (u.hash.length > 1) out.push({ value: safeDecode(u.hash.slice(1)), detail: 'fragments are not permitted in the URL' });
  if (u.search.length > 1) out.push({ value: u.search.slice(1), detail: 'query parameters are not permitted in the URL' });
  return out;
}

/** The causes kube gives `url` at `field` (empty = accepted); `forceHttps` as kube's argument. */
export function validateWebhookUrl(field: string, url: string, forceHttps = true): StatusCause[] {
  return problems(url, forceHttps).map((p) => (p.value === undefined ? cause.required(field, p.detail) : cause.invalid(field, p.value, p.detail)));
}

/** What is wrong with a configured webhook server URL, in kube's words (undefined = nothing), for start errors. */
export function webhookUrlProblem(url: string): string | undefined {
  return problems(url, true)[0]?.detail;
}
