// node:crypto is loaded by the first seal or SHA-256, not when the store is imported: a read that opens no sealed field
// (`pivot window` on the demo) does not pay its ~10-20 ms (issue 32, ADR 0054), and neither does a snapshot's checksum,
// written or checked, unless it is an earlier version's SHA-256 (ADR 0059). Checked in a fresh Node, whose list of
// loaded built-in modules says what was loaded and when.
import { spawnSync } from "node:child_process"
import { pathToFileURL } from "node:url"
import { describe, expect, it } from "vitest"
import * as NodeCrypto from "../src/internal/nodeCrypto.ts"

const store = pathToFileURL(new URL("../src/index.ts", import.meta.url).pathname).href

/** What a fresh Node that imports the store's sources and then runs `use` (with `store` in scope) saw. */
const loadedIn = (use: string): { readonly atImport: boolean; readonly afterUse: boolean } => {
  const script = [
    `const store = await import(${JSON.stringify(store)})`,
    `const loaded = () => process.moduleLoadList.includes("NativeModule crypto")`,
    `const atImport = loaded()`,
    use,
    `console.log(JSON.stringify({ atImport, afterUse: loaded() }))`,
  ].join("\n")
  const result = spawnSync(process.execPath, ["--conditions=@pivot/source", "--input-type=module", "-e", script], {
    encoding: "utf8",
  })
  expect(result.stderr).toBe("")
  return JSON.parse(result.stdout)
}

describe("loading node:crypto", () => {
  it("given the store imported, when nothing is checksummed or sealed, then node:crypto is not loaded; the first SHA-256 loads it", () => {
    const use = `if (store.Snapshot.sha256("abc") !== "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") throw new Error("sha")`
    expect(loadedIn(use)).toEqual({ atImport: false, afterUse: true })
  }, 60_000)

  // A restart checks its snapshot inside its first call: loading node:crypto there cost it ~10-20 ms (ADR 0059).
  it("given a snapshot checksummed and checked as this version writes it, then node:crypto is not loaded", () => {
    const use = [
      `const data = JSON.stringify({ session: "ses_a", version: 3 })`,
      `const snapshot = { stream: "s", version: 3, format: "f", data, checksum: store.Snapshot.checksum(data), recordedAt: 0 }`,
      `if (!store.Snapshot.intact(snapshot)) throw new Error("not intact")`,
    ].join("\n")
    expect(loadedIn(use)).toEqual({ atImport: false, afterUse: false })
  }, 60_000)

  it("given a snapshot an earlier version checksummed (SHA-256), then checking it loads node:crypto and passes", () => {
    const use = [
      `const snapshot = { stream: "s", version: 3, format: "f", data: "abc", recordedAt: 0,`,
      `  checksum: "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" }`,
      `if (!store.Snapshot.intact(snapshot)) throw new Error("not intact")`,
    ].join("\n")
    expect(loadedIn(use)).toEqual({ atImport: false, afterUse: true })
  }, 60_000)

  it("is Node's own module, loaded once", () => {
    expect(NodeCrypto.crypto()).toBe(process.getBuiltinModule("node:crypto"))
    expect(NodeCrypto.crypto()).toBe(NodeCrypto.crypto())
  })
})
