// The TLS server's own failures: handshakes that did not complete (kube counts
// its "TLS handshake error from" log lines).
import { LeanCounter } from '../../lib/metrics/lean.js';
import { registry } from './registry.js';

const handshakeErrors = new LeanCounter(
  'apiserver_tls_handshake_errors_total',
  "Number of requests dropped with 'TLS handshake error from' error",
  { stabilityLevel: 'ALPHA' },
  registry,
).handleFor('', {});

export function countTlsHandshakeError(): void {
  handshakeErrors.value++;
}
