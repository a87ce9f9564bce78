/** Protocol Buffers (proto3) encoding, the little of it Hyperchain's formats need. */

const UINT64 = (1n << 64n) - 1n

/**
 * Minimal proto3 writer: varint (int64, two's complement for negatives) and length-delimited
 * fields. The JVM payloads' InvokeArgs (jvm-payload.ts) and the node's transaction hash
 * (src/crypto/tx-hash.ts) are written with it. The node runs it for every admitted transaction
 * (the hash covers the TransactionValue), so bytes go into one growing buffer and varints use
 * number arithmetic below 2^53.
 */
export class ProtoWriter {
  private buffer = new Uint8Array(64)
  private length = 0

  varint(field: number, value: bigint): void {
    if (value === 0n) return
    this.rawVarint(field << 3)
    const unsigned = value & UINT64
    if (unsigned <= BigInt(Number.MAX_SAFE_INTEGER)) this.rawVarint(Number(unsigned))
    else this.bigVarint(unsigned)
  }

  bytes(field: number, value: Uint8Array | undefined): void {
    if (value === undefined || value.length === 0) return
    this.element(field, value)
  }

  /** One element of a repeated bytes field: written even when empty. */
  element(field: number, value: Uint8Array): void {
    this.rawVarint((field << 3) | 2)
    this.rawVarint(value.length)
    this.room(value.length)
    this.buffer.set(value, this.length)
    this.length += value.length
  }

  finish(): Uint8Array {
    return this.buffer.slice(0, this.length)
  }

  private room(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return
    const grown = new Uint8Array(Math.max(this.buffer.length * 2, this.length + bytes))
    grown.set(this.buffer.subarray(0, this.length))
    this.buffer = grown
  }

  /** a varint of a safe integer (≥ 0) */
  private rawVarint(value: number): void {
    this.room(10)
    let rest = value
    while (rest >= 0x80) {
      this.buffer[this.length++] = (rest % 0x80) | 0x80
      rest = Math.floor(rest / 0x80)
    }
    this.buffer[this.length++] = rest
  }

  private bigVarint(value: bigint): void {
    this.room(10)
    let rest = value
    while (rest >= 0x80n) {
      this.buffer[this.length++] = Number(rest & 0x7fn) | 0x80
      rest >>= 7n
    }
    this.buffer[this.length++] = Number(rest)
  }
}
