// Two copies of effect in one process (what an app gets when npm nests a second copy under a package): a schema of
// one copy fails the other's decode with a misleading "Expected an integer" for integer limits. The registry names the
// copies, and the limits check says that instead.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { pathToFileURL } from "node:url"
import { EffectCopies, Model } from "@pivot/core"
import { Result } from "effect"
import { afterAll, describe, expect, it, onTestFinished } from "vitest"
import { Config } from "../src/index.ts"

const ref = { providerId: "acme", modelId: "m1" }
const limits = { context: 32_000, output: 4_000 }

/** A second copy of effect's compiled modules, under a node_modules folder (so it is loaded as Node loads it). */
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-effect-copy-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const secondCopy = async () => {
  const from = path.dirname(path.dirname(require.resolve("effect/Schema")))
  const to = path.join(dir, "node_modules/effect")
  fs.cpSync(path.join(from, "dist"), path.join(to, "dist"), {
    recursive: true,
    filter: (file) => fs.statSync(file).isDirectory() || file.endsWith(".js"),
  })
  fs.copyFileSync(path.join(from, "package.json"), path.join(to, "package.json"))
  return (await import(pathToFileURL(path.join(to, "dist/Schema.js")).href)) as typeof import("effect/Schema")
}

describe("two copies of effect", () => {
  it("with one copy, nothing is reported and the limits pass", () => {
    expect(EffectCopies.problem()).toBeUndefined()
    expect(Result.isSuccess(Config.checkLimits(ref, limits))).toBe(true)
  })

  it("a second copy misreads core's schema; once it is registered, the copies are named, and so the limits' failure", async () => {
    const Other = await secondCopy()
    // The symptom: integer limits "are not integers" to the other copy.
    const misread = Other.decodeUnknownResult(Model.ModelLimits as never)(limits)
    expect(Result.isFailure(misread)).toBe(true)

    EffectCopies.register("@pivot/other", Other.String)
    // The registry is process-wide (on globalThis): other test files of this worker see it, so the copy goes again.
    onTestFinished(() => {
      ;(globalThis as { [key: symbol]: Map<object, unknown> })[Symbol.for("@pivot/core/EffectCopies")]?.delete(
        Other.String,
      )
    })
    const problem = EffectCopies.problem()
    // Which packages loaded the first copy depends on what this worker imported before (core first, runtime too).
    expect(problem).toMatch(/^2 copies of effect are loaded \(@pivot\/core(, @pivot\/[a-z-]+)* \| @pivot\/other\)/)
    expect(problem).toMatch(/\(@pivot\/core[^|]*@pivot\/runtime[^|]* \|/)
    expect(problem).toContain("npm ls effect")
    expect(problem!.split("\n")).toHaveLength(1)
    // A decode failure in the limits check names the copies (the limits here are not integers, to make it fail).
    const checked = Config.checkLimits(ref, { context: 1.5, output: 0 })
    expect(Result.isFailure(checked) && checked.failure.message).toBe(`impossible limits for acme/m1: ${problem}`)
  })
})
