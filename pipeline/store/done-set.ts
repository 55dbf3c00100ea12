// Which input positions a record-wise stage has finished: one bit per input record, so resuming a
// 300K-record stage costs 40 KB of memory, not a set of 300K ids.

export class DoneSet {
  private bits = new Uint8Array(1024);
  private count = 0;

  has(position: number): boolean {
    const byte = position >> 3;
    return byte < this.bits.length && (this.bits[byte]! & (1 << (position & 7))) !== 0;
  }

  add(position: number): void {
    const byte = position >> 3;
    if (byte >= this.bits.length) {
      const grown = new Uint8Array(Math.max(this.bits.length * 2, byte + 1));
      grown.set(this.bits);
      this.bits = grown;
    }
    const mask = 1 << (position & 7);
    if ((this.bits[byte]! & mask) === 0) {
      this.bits[byte]! |= mask;
      this.count++;
    }
  }

  get size(): number {
    return this.count;
  }
}
