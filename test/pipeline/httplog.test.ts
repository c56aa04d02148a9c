// The pieces of the -v request lines: Go's Duration text for the latency, the
// URI with token-like query values redacted, headers as Go prints an
// http.Header with credentials as their name only and long values cut.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { goDuration, headersText, redactedUri } from '../../gateway/pipeline/httplog.js';

test("latency is written as Go's time.Duration String", () => {
  for (const [ms, text] of [
    [0, '0s'],
    [0.0005, '500ns'],
    [0.0125, '12.5µs'],
    [1.234567, '1.234567ms'],
    [250, '250ms'],
    [2500, '2.5s'],
    [62_500, '1m2.5s'],
    [3_723_000, '1h2m3s'],
  ] as const) {
    assert.equal(goDuration(ms), text, String(ms));
  }
});

test('token-like query values are redacted, everything else kept as sent', () => {
  assert.equal(redactedUri('/api/v1/pods?limit=500'), '/api/v1/pods?limit=500');
  assert.equal(redactedUri('/api/v1/pods?access_token=abc&limit=1'), '/api/v1/pods?access_token=[redacted]&limit=1');
  assert.equal(redactedUri('/x?Password=p&y=1&%74oken=t'), '/x?Password=[redacted]&y=1&%74oken=[redacted]');
});

test('headers print as an http.Header, credentials by name only, long values cut', () => {
  const text = headersText({ authorization: 'Bearer abc', 'user-agent': 'kubectl', 'x-long': 'v'.repeat(600), 'x-auth-token': 't', cookie: 'c=1' });
  assert.equal(
    text,
    `map[authorization:[[redacted]] cookie:[[redacted]] user-agent:[kubectl] x-auth-token:[[redacted]] x-long:[${'v'.repeat(512)}…(88 more)]]`,
  );
});
