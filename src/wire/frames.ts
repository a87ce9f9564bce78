/**
 * Several byte strings as one buffer, `u32 length ‖ bytes` each (0xffffffff: absent), for a
 * message to another thread whose buffer is transferred, not cloned. An array of Uint8Arrays posted
 * as is costs a structured clone of each one's whole backing buffer, and the bytes this node posts
 * are mostly views into a bigger one (msgpack's output buffer, LMDB's reads, Node's 8 KiB pool): a
 * 300-byte transaction cloned as 8 KiB or more.
 */

const ABSENT = 0xffffffff

export function packFrames(frames: readonly (Uint8Array | undefined)[]): Uint8Array {
  let size = 4 * frames.length
  for (const frame of frames) size += frame?.length ?? 0
  const out = new Uint8Array(size)
  const view = new DataView(out.buffer)
  let at = 0
  for (const frame of frames) {
    view.setUint32(at, frame === undefined ? ABSENT : frame.length)
    at += 4
    if (frame === undefined) continue
    out.set(frame, at)
    at += frame.length
  }
  return out
}

/** packFrames read back: views into `packed`, no copies. Throws on a buffer packFrames did not make. */
export function unpackFrames(packed: Uint8Array): (Uint8Array | undefined)[] {
  const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength)
  const frames: (Uint8Array | undefined)[] = []
  let at = 0
  while (at < packed.length) {
    if (at + 4 > packed.length) throw new RangeError('frames: a length cut short')
    const length = view.getUint32(at)
    at += 4
    if (length === ABSENT) {
      frames.push(undefined)
      continue
    }
    if (at + length > packed.length) throw new RangeError('frames: a frame runs past the end')
    frames.push(packed.subarray(at, at + length))
    at += length
  }
  return frames
}
