/** Protocol Buffers (proto3) encoding, the little of it Hyperchain's formats need. */

const UINT64 = (1n << 64n) - 1n

/**
 * Minimal proto3 writer: varint (int64, two's complement for negatives) and length-delimited
 * fields. The JVM payloads' InvokeArgs (jvm-payload.ts) and the node's transaction hash
 * (src/crypto/tx-hash.ts) are written with it.
 */
export class ProtoWriter {
  private chunks: number[] = []

  varint(field: number, value: bigint): void {
    if (value === 0n) return
    this.rawVarint(BigInt(field << 3))
    this.rawVarint(value & UINT64)
  }

  bytes(field: number, value: Uint8Array | undefined): void {
    if (value === undefined || value.length === 0) return
    this.element(field, value)
  }

  /** One element of a repeated bytes field: written even when empty. */
  element(field: number, value: Uint8Array): void {
    this.rawVarint(BigInt((field << 3) | 2))
    this.rawVarint(BigInt(value.length))
    for (const byte of value) this.chunks.push(byte)
  }

  finish(): Uint8Array {
    return Uint8Array.from(this.chunks)
  }

  private rawVarint(value: bigint): void {
    let rest = value
    while (rest >= 0x80n) {
      this.chunks.push(Number(rest & 0x7fn) | 0x80)
      rest >>= 7n
    }
    this.chunks.push(Number(rest))
  }
}
