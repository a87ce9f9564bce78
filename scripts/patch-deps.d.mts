/** Types of scripts/patch-deps.mjs (plain JavaScript: npm's postinstall runs it before any TypeScript tooling). */
export interface DependencyEdit {
  what: string
  pattern: RegExp
  replacement: string
}
export declare const MARKER: string
export declare const EVM_EDITS: readonly DependencyEdit[]
export declare function evmFiles(fromDir?: string): string[]
export declare function patchText(text: string, edits?: readonly DependencyEdit[]): { text: string; patched: boolean; missing: string[] }
export declare function isPatched(path: string): boolean
