// Node's `node:crypto`, loaded on first use rather than when the store is imported: only writing a snapshot (its
// checksum), checking one, and sealing or opening a sealed field need it, and loading it costs a command that does
// none of those (`pivot window` on a database without snapshots read) ~10-20 ms of its start (issue 32, ADR 0054).
// `process.getBuiltinModule` is synchronous, so the callers stay synchronous; Node >= 22.3 has it, and so does the Bun
// inside OpenCode (1.3.14, checked), where the plugin runs the store.
import type * as NodeCrypto from "node:crypto"

let loaded: typeof NodeCrypto | undefined

/** `node:crypto`, loaded the first time it is asked for. */
export const crypto = (): typeof NodeCrypto => {
  loaded ??= process.getBuiltinModule("node:crypto")
  return loaded
}
