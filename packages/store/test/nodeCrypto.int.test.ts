// node:crypto is loaded by the first checksum or seal, not when the store is imported: a read that writes no snapshot
// and opens no sealed field (`pivot window` on the demo) does not pay its ~10-20 ms (issue 32, ADR 0054). Checked in
// a fresh Node, whose list of loaded built-in modules says what was loaded and when.
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
  it("given the store imported, when nothing is checksummed or sealed, then node:crypto is not loaded; the first checksum loads it and is the SHA-256", () => {
    const use = `if (store.Snapshot.checksum("abc") !== "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") throw new Error("sha")`
    expect(loadedIn(use)).toEqual({ atImport: false, afterUse: true })
  }, 60_000)

  it("is Node's own module, loaded once", () => {
    expect(NodeCrypto.crypto()).toBe(process.getBuiltinModule("node:crypto"))
    expect(NodeCrypto.crypto()).toBe(NodeCrypto.crypto())
  })
})
