// The IEEE half-precision form of a float, for the shortest-width floats both CBOR writers emit.

/**
 * The IEEE half-precision bits of `f` when it is exactly one (kube's encoder:
 * fxamacker/cbor with ShortestFloat16), else undefined.
 */
export function float16Bits(f: number): number | undefined {
  if (f === 0) return Object.is(f, -0) ? 0x8000 : 0;
  const sign = f < 0 ? 0x8000 : 0;
  const a = Math.abs(f);
  if (a > 65504) return undefined;
  if (a < 2 ** -14) {
    const m = a * 2 ** 24; // subnormal: m × 2^-24, m < 1024
    return Number.isInteger(m) ? sign | m : undefined;
  }
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  else if (2 ** (e + 1) <= a) e++;
  const m = (a / 2 ** e - 1) * 1024;
  return Number.isInteger(m) ? sign | ((e + 15) << 10) | m : undefined;
}
