// Latency samples and their percentiles (milliseconds).
export class Samples {
  private data = new Float64Array(1 << 16);
  private n = 0;

  add(ms: number): void {
    if (this.n === this.data.length) {
      const grown = new Float64Array(this.data.length * 2);
      grown.set(this.data);
      this.data = grown;
    }
    this.data[this.n++] = ms;
  }

  get count(): number {
    return this.n;
  }

  summary(): Percentiles {
    const sorted = this.data.slice(0, this.n).sort();
    const at = (p: number): number => (this.n === 0 ? NaN : sorted[Math.min(this.n - 1, Math.floor(p * this.n))]!);
    return { p50: at(0.5), p99: at(0.99), max: this.n === 0 ? NaN : sorted[this.n - 1]! };
  }
}

export interface Percentiles {
  p50: number;
  p99: number;
  max: number;
}
