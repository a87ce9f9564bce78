/** Files a crash must never leave half-written (keys, certificates, configuration). */
import { closeSync, fsyncSync, openSync, renameSync, writeSync } from 'node:fs'

/** Writes `text` to a temporary file, syncs it and renames it over `file`: the old or the new content, never a mix. */
export function writeFileAtomically(file: string, text: string, mode = 0o644): void {
  const temporary = `${file}.${process.pid}.tmp`
  const fd = openSync(temporary, 'w', mode)
  try {
    writeSync(fd, text)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  renameSync(temporary, file)
}
