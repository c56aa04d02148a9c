// kube-controller-manager's csrsigning: each approved, not yet failed or issued
// CertificateSigningRequest of a signer Gatehouse runs gets a certificate from
// that signer's CA, valid for the lesser of its expirationSeconds and
// --cluster-signing-duration; a request that breaks the signer's rules gets the
// Failed condition (SignerValidationFailure) instead. Requests that are not
// approved are never signed.
import type { KObject } from '../../../lib/api/meta.js';
import { isPlainObject } from '../../../lib/api/meta.js';
import { parseCsrBase64 } from '../../../lib/certificates/csr.js';
import { certificateOf, hasCondition, isApproved } from '../../../lib/certificates/conditions.js';
import { issueCertificate } from '../../../lib/certificates/issue.js';
import { keyProblem, SIGNER_RULES } from '../../../lib/certificates/signerrules.js';
import type { SigningCaSource } from '../../../lib/certificates/signingca.js';
import { rfc3339 } from '../../../lib/api/meta.js';
import type { CoreEnv } from '../env.js';
import type { StoreEvent } from '../store/types.js';
import { csrPrefix, listCsrs, writeCsrStatus } from './csrs.js';
import { WatchingController } from './loop.js';

export interface CsrSigningConfig {
  /** The CA of each signer Gatehouse runs, by signer name. */
  readonly signers: ReadonlyMap<string, SigningCaSource>;
  /** --cluster-signing-duration. */
  readonly maxDurationMs: number;
}

const MIN_DURATION_MS = 600_000;

function specOf(csr: KObject): Record<string, unknown> {
  return isPlainObject(csr['spec']) ? csr['spec'] : {};
}

/** Waiting for a signature: approved, not failed, no certificate yet. */
function wantsSignature(csr: KObject): boolean {
  return isApproved(csr) && !hasCondition(csr, 'Failed') && certificateOf(csr) === '';
}

export class CsrSigningController extends WatchingController {
  constructor(
    env: CoreEnv,
    private readonly cfg: CsrSigningConfig,
  ) {
    super(env, 'csrsigning', [csrPrefix(env)]);
  }

  /** A full pass at start and after a broken watch: every request waiting for a signature. */
  protected async pass(): Promise<number | undefined> {
    let failed: unknown;
    for (const csr of await listCsrs(this.env)) {
      try {
        await this.handle(csr);
      } catch (err) {
        failed ??= new Error(`${csr.metadata.name ?? ''}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    // The loop retries a pass that threw (an unreadable CA file, a store error).
    if (failed) throw failed;
    return undefined;
  }

  /** A change signs that one request: no list per event, so a burst of creates costs each one read. */
  protected override onEvent(ev: StoreEvent): void {
    if (ev.type === 'DELETED' || !this.waiting(ev.object)) return;
    this.enqueue(`sign ${ev.object.metadata.name ?? ''}`, () => this.handle(ev.object));
  }

  private waiting(csr: KObject): SigningCaSource | undefined {
    const ca = this.cfg.signers.get(String(specOf(csr)['signerName'] ?? ''));
    return ca && wantsSignature(csr) ? ca : undefined;
  }

  private async handle(csr: KObject): Promise<void> {
    const ca = this.waiting(csr);
    if (!ca) return;
    // A failure is logged by the loop (`csrsigning: sign <name>: …`), which then retries with a full pass.
    await this.sign(csr, String(specOf(csr)['signerName']), ca);
  }

  private async sign(csr: KObject, signer: string, source: SigningCaSource): Promise<void> {
    const spec = specOf(csr);
    const usages = Array.isArray(spec['usages']) ? spec['usages'].filter((u): u is string => typeof u === 'string') : [];
    const parsed = parseCsrBase64(String(spec['request'] ?? ''));
    const problem = SIGNER_RULES.get(signer)!(parsed, usages) ?? keyProblem(parsed);
    if (problem !== undefined) {
      await writeCsrStatus(this.env, csr, 'status', wantsSignature, (s) => ({
        ...s,
        conditions: [
          ...(Array.isArray(s['conditions']) ? s['conditions'] : []),
          { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: problem, lastUpdateTime: rfc3339(this.env.clock()) },
        ],
      }));
      return;
    }
    const requested = typeof spec['expirationSeconds'] === 'number' ? Math.max(MIN_DURATION_MS, spec['expirationSeconds'] * 1000) : Infinity;
    const ca = await source.current();
    const pem = issueCertificate(ca, parsed, { usages, ttlMs: Math.min(requested, this.cfg.maxDurationMs), now: this.env.clock() });
    await writeCsrStatus(this.env, csr, 'status', wantsSignature, (s) => ({ ...s, certificate: Buffer.from(pem).toString('base64') }));
  }
}
