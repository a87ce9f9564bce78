/**
 * Hex digits by character code, one table for the two readers that scan hex text themselves: the
 * executor's (exec/hex-bytes.ts: either case, as clients send payloads) and the record codec's
 * (wire/record-codec.ts: lower case only, so that the text it gives back is the text stored).
 */

/** 0–15 for `0-9a-f`, 16 + value for `A-F`, 255 for any other code below 128 */
const DIGITS = new Uint8Array(128).fill(255)
for (let i = 0; i < 10; i++) DIGITS[48 + i] = i
for (let i = 0; i < 6; i++) {
  DIGITS[97 + i] = 10 + i
  DIGITS[65 + i] = 16 + 10 + i
}

/** the value of a hex digit of either case; -1 for anything else */
export function hexDigit(code: number): number {
  const digit = code < 128 ? DIGITS[code] : 255
  return digit < 32 ? digit & 15 : -1
}

/** the value of a lower-case hex digit; -1 for anything else (upper case included) */
export function lowerHexDigit(code: number): number {
  const digit = code < 128 ? DIGITS[code] : 255
  return digit < 16 ? digit : -1
}
