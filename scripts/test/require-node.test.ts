// scripts/require-node.mjs (run before every npm script) holds the same minimum Node as the packages' engines.
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { message, minimum, tooOld } from "../require-node.mjs"

const root = join(import.meta.dirname, "../..")
const engines = (file: string) => JSON.parse(readFileSync(join(root, file), "utf8")).engines.node as string

describe("require-node.mjs", () => {
  it("names the minimum of the root engines, which every package's engines states too", () => {
    expect(`>=${minimum}`).toBe(engines("package.json"))
    for (const pkg of ["ai", "cli", "core", "opencode", "runtime", "server", "store"])
      expect(engines(`packages/${pkg}/package.json`)).toBe(engines("package.json"))
  })

  it("refuses a Node below 22.16 (22.15 included) and accepts 22.16 and later", () => {
    expect(["20.20.2", "22.0.0", "22.15.1", "v22.15.0"].filter((v) => !tooOld(v))).toEqual([])
    expect(["22.16.0", "22.16.1", "22.17.0", "24.0.0", "v24.21.0"].filter((v) => tooOld(v))).toEqual([])
  })

  it("says >= 22.16 in its message", () => {
    expect(message("22.15.0").split("\n")[0]).toBe("pivot needs Node >= 22.16, but this script runs on Node 22.15.0.")
  })
})
