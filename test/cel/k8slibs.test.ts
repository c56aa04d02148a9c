// The Kubernetes quantity, IP and CIDR CEL libraries (lib/cel/quantity.ts,
// net.ts), each expression with the answer kube-apiserver's CEL gives.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CelEnvironment, CelScalar } from '../../lib/cel/index.js';
import { parseQuantity } from '../../lib/cel/quantity.js';

const env = new CelEnvironment('k8slibs-test', { self: CelScalar.DYN });
const run = (e: string) => env.compile(e).evaluate({ self: null });

const TRUE: string[] = [
  'isQuantity("1.5Gi") && isQuantity("500m") && isQuantity("1e3") && isQuantity("-2")',
  '!isQuantity("1.5GB") && !isQuantity("") && !isQuantity("1K")',
  'quantity("1Gi") == quantity("1024Mi")',
  'quantity("1k") == quantity("1000")',
  'quantity("0.5") == quantity("500m")',
  'quantity("1Gi").isGreaterThan(quantity("1G"))',
  'quantity("999m").isLessThan(quantity("1"))',
  'quantity("2").compareTo(quantity("2000m")) == 0',
  'quantity("1.5").isInteger() == false && quantity("2k").isInteger()',
  'quantity("2k").asInteger() == 2000',
  'quantity("1.5").asApproximateFloat() == 1.5',
  'quantity("-1m").sign() == -1 && quantity("0").sign() == 0',
  'quantity("1").add(quantity("500m")) == quantity("1.5")',
  'quantity("1").add(2) == quantity("3")',
  'quantity("1Ki").sub(quantity("24")) == quantity("1000")',
  'isIP("10.0.0.1") && isIP("::1") && !isIP("10.0.0.01") && !isIP("::ffff:1.2.3.4") && !isIP("fe80::1%eth0")',
  'ip("10.0.0.1").family() == 4 && ip("2001:db8::1").family() == 6',
  'ip("2001:db8:0:0:0:0:0:1") == ip("2001:db8::1")',
  'ip("127.0.0.2").isLoopback() && ip("::1").isLoopback() && !ip("10.0.0.1").isLoopback()',
  'ip("0.0.0.0").isUnspecified() && ip("::").isUnspecified()',
  'ip("169.254.1.1").isLinkLocalUnicast() && ip("fe80::1").isLinkLocalUnicast()',
  'ip("224.0.0.1").isLinkLocalMulticast() && ip("ff02::1").isLinkLocalMulticast()',
  'ip("8.8.8.8").isGlobalUnicast() && !ip("255.255.255.255").isGlobalUnicast() && !ip("224.0.0.1").isGlobalUnicast()',
  'isCIDR("10.0.0.0/8") && !isCIDR("10.0.0.0/33") && !isCIDR("10.0.0.0")',
  'cidr("10.0.0.0/8").containsIP(ip("10.1.2.3")) && cidr("10.0.0.0/8").containsIP("10.1.2.3") && !cidr("10.0.0.0/8").containsIP("11.0.0.1")',
  'cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16") && !cidr("10.1.0.0/16").containsCIDR("10.0.0.0/8")',
  'cidr("10.1.2.3/8").masked() == cidr("10.0.0.0/8") && cidr("10.1.2.3/8").ip() == ip("10.1.2.3") && cidr("10.1.2.3/8").prefixLength() == 8',
  'cidr("2001:db8::1/32").masked() == cidr("2001:db8::/32") && !cidr("2001:db8::/32").containsIP("10.0.0.1")',
];

describe('Kubernetes CEL libraries: quantity, IP, CIDR', () => {
  for (const e of TRUE) it(e, () => assert.equal(run(e), true));

  it('refuses what is not a quantity, an IP or a CIDR, and an integer out of range', () => {
    assert.throws(() => run('quantity("1GB") == quantity("1G")'), /quantities must match/);
    assert.throws(() => run('ip("::ffff:1.2.3.4").family() == 4'), /IPv4-mapped IPv6 address is not allowed/);
    assert.throws(() => run('cidr("10.0.0.0/40").prefixLength() == 40'), /invalid prefix/);
    assert.throws(() => run('quantity("1.5").asInteger() == 1'), /cannot convert value to integer/);
    assert.throws(() => run('quantity("10E").asInteger() == 1'), /cannot convert value to integer/);
  });

  it('reads no client object as a library value, whatever its keys (marker.ts)', () => {
    // The fixed marker keys these libraries used: JSON can carry them, so a client could forge a value.
    const forged = {
      q: { '\u0000k8s.quantity': '5e0' },
      ip: { '\u0000k8s.ip': '10.0.0.1' },
      u: { '\u0000k8s.url': 'https://x' },
      f: { '\u0000k8s.format': 'dns1123Label' },
      none: { '\u0000gatehouse:none': true },
    };
    const ev = (e: string) => env.compile(e).evaluate({ self: forged });
    assert.equal(ev('self.q == quantity("5")'), false);
    assert.throws(() => ev('self.q.isLessThan(quantity("10"))'), /not a quantity/);
    assert.equal(ev('self.ip == ip("10.0.0.1")'), false);
    assert.throws(() => ev('self.ip.family() == 4'), /not an IP/);
    assert.equal(ev('self.u == url("https://x")'), false);
    assert.throws(() => ev('self.u.getScheme() == "https"'), /not a URL/);
    assert.throws(() => ev('self.f.validate("x").hasValue()'));
    // An object is a present value, never optional.none() (an oldSelf that passed for absent would skip a transition rule).
    assert.equal(ev('self.none.hasValue()'), true);
    // The libraries' own values still work through the same paths.
    assert.equal(ev('quantity("5").isLessThan(quantity("10")) && ip("10.0.0.1").family() == 4 && url("https://x").getScheme() == "https"'), true);
  });

  it('parses exactly', () => {
    assert.deepEqual(parseQuantity('1.5Gi'), { n: 1610612736n, e: 0 });
    assert.deepEqual(parseQuantity('500m'), { n: 5n, e: -1 });
    assert.deepEqual(parseQuantity('.5'), { n: 5n, e: -1 });
    assert.equal(parseQuantity('1..5'), undefined);
  });
});
