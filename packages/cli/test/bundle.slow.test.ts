/**
 * The installed `pivot` runs the bundle (dist/bundle/, ADR 0033), not the sources the other tests import: here
 * `bin.mjs` runs as users run it (no `@pivot/source` condition) and must load nothing but the bundle, answer exactly
 * what the sources answer, and find the files the package ships beside its code (its version, the demo's example, the
 * viewer's assets). A bundle older than the sources fails here: `npm run build` rebuilds it. Slow: each run of the
 * sources loads them as TypeScript, about twenty processes in all.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { precompute } from "../src/Precompute.ts"
import { realExport, realSessionId, repoRoot, stopped } from "./support/audit.ts"

const bin = fileURLToPath(new URL("../src/bin.mjs", import.meta.url))
const probe = fileURLToPath(new URL("./support/ModuleProbe.mjs", import.meta.url))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bundle-"))
const demoDb = path.join(dir, "demo.db")
const importDb = path.join(dir, "import.db")
const env = { ...process.env, NO_COLOR: "1" }

/** `pivot …` as installed: bin.mjs and the bundle. */
const built = (...args: Array<string>) =>
  spawnSync(process.execPath, [bin, ...args], { cwd: dir, encoding: "utf8", env })
/** `pivot …` from the TypeScript sources. */
const source = (...args: Array<string>) =>
  spawnSync(process.execPath, ["--conditions=@pivot/source", bin, ...args], { cwd: dir, encoding: "utf8", env })

beforeAll(() => {
  expect(source("demo", "--db", demoDb).status).toBe(0)
  expect(source("import", realExport, "--db", importDb).status).toBe(0)
}, 120_000)
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("the bundled pivot", () => {
  /** The files, and Node's built-in modules, that `pivot <args>` loads. */
  const loads = (args: ReadonlyArray<string>) => {
    const result = spawnSync(process.execPath, ["--import", probe, bin, ...args], { cwd: dir, encoding: "utf8", env })
    expect(result.status).toBe(0)
    const urls = result.stderr
      .split("\n")
      .filter((line) => line.startsWith("loaded "))
      .map((line) => line.slice("loaded ".length))
    return {
      files: urls.filter((url) => url.startsWith("file://")).map((url) => fileURLToPath(url)),
      builtIns: urls.filter((url) => url.startsWith("node:")),
    }
  }
  const bundle = path.join(repoRoot, "packages/cli/dist/bundle") + path.sep
  const beside = [bin, path.join(path.dirname(bin), "compileCache.mjs")]

  it("given --help and window, when bin.mjs runs, then the only files it loads are bin.mjs's and the bundle's", () => {
    for (const args of [["--help"], ["window", "--db", demoDb]]) {
      const { files } = loads(args)
      expect(files.filter((file) => !beside.includes(file) && !file.startsWith(bundle))).toEqual([])
      expect(files.filter((file) => file.startsWith(bundle)).length).toBeGreaterThan(0)
    }
  })

  it("given --help, --version or a command's --help, then it loads the bundle's entry alone (ADR 0037)", () => {
    for (const args of [["--help"], ["--version"], ["window", "--help"]])
      expect(loads(args).files.filter((file) => file.startsWith(bundle))).toEqual([path.join(bundle, "bin.js")])
  })

  it("given window, then none of node:child_process, node:readline (Services.ts) and node:crypto (ADR 0054) is loaded", () => {
    const { builtIns } = loads(["window", "--db", demoDb])
    expect(builtIns).not.toContain("node:child_process")
    expect(builtIns).not.toContain("node:readline")
    // The store loads node:crypto on its first checksum or seal (ADR 0054); a read of the demo makes neither.
    expect(builtIns).not.toContain("node:crypto")
  })

  it("given window or inspect with plain arguments, then no file of effect/cli's command line is loaded (ADR 0048)", () => {
    // effect/cli's parser is in the bundle's files that hold its error for a flag declared twice.
    const cliFiles = (args: ReadonlyArray<string>) =>
      loads(args)
        .files.filter((file) => file.startsWith(bundle))
        .filter((file) => fs.readFileSync(file, "utf8").includes("Duplicate flag name"))
    expect(cliFiles(["window", "--db", demoDb])).toEqual([])
    expect(cliFiles(["window", "--db", demoDb, "--sources", "--tail", "3"])).toEqual([])
    expect(cliFiles(["inspect", "--db", demoDb, "--limit", "5"])).toEqual([])
    // A form the plain command line leaves to effect/cli loads it: the check above can see it.
    expect(cliFiles(["window", `--db=${demoDb}`]).length).toBeGreaterThan(0)
  })

  it("given window on a database without read-model tables, then no file of the read models' code is loaded; with them, it is (ADR 0062)", () => {
    // The read models' code is in the bundle's file that holds the recall table's index on its messages.
    const readModelFiles = (args: ReadonlyArray<string>) =>
      loads(args)
        .files.filter((file) => file.startsWith(bundle))
        .filter((file) => fs.readFileSync(file, "utf8").includes("pivot_rm_recall_message"))
    expect(readModelFiles(["window", "--db", demoDb])).toEqual([])
    expect(readModelFiles(["window", "--db", demoDb, "--sources"])).toEqual([])
    // The imported database has the tables: its window is read from them, so the check above can see the file.
    expect(readModelFiles(["window", "--db", importDb]).length).toBeGreaterThan(0)
  })

  it("given the bundle's precomputed answers, then they are effect/cli's for the current sources", async () => {
    const built = JSON.parse(fs.readFileSync(path.join(bundle, "precomputed.json"), "utf8"))
    expect(built).toEqual(await precompute(path.join(repoRoot, "packages/cli")))
  }, 120_000)

  const same: ReadonlyArray<ReadonlyArray<string>> = [
    ["--help"],
    ["-h"],
    [],
    ["--version"],
    ["-v"],
    ["help", "window"],
    ["serve", "-h"],
    ["nope"],
    ["window", "--db", demoDb, "--format", "json"],
    ["window", "--db", importDb, "--session", realSessionId, "--at", "40"],
    ["inspect", "--db", demoDb, "--format", "json"],
    ["prune", "--db", importDb, "--session", realSessionId, "--dry-run", "--format", "json"],
    ["whatif", realExport, "--format", "json"],
    ["window", "--db", demoDb, "--session", "ses_nobody"],
    ["window", "--db", demoDb],
    ["window", "--db", demoDb, "--sources"],
    ["window", "--db", demoDb, "--at", "40"],
    ["window", "--db", demoDb, "--tail", "3"],
    ["window", "--db", demoDb, "--at", "x"],
    ["window", "--db", demoDb, "--at", "999"],
    ["window", "--db", path.join(dir, "missing.db")],
    ["inspect", "--db", demoDb, "--limit", "5"],
  ]
  it.each(same)("given pivot %s, then the bundle's output and exit code equal the sources'", (...args) => {
    const fromBundle = built(...args)
    const fromSource = source(...args)
    expect({ status: fromBundle.status, stdout: fromBundle.stdout, stderr: fromBundle.stderr }).toEqual({
      status: fromSource.status,
      stdout: fromSource.stdout,
      stderr: fromSource.stderr,
    })
  })

  it("given demo, then the bundle finds the example the package ships and runs it", () => {
    const db = path.join(dir, "bundled-demo.db")
    const result = built("demo", "--db", db)
    expect(result.status).toBe(0)
    expect(result.stdout).toContain(`npx pivot serve ${db}`)
    expect(built("--version").stdout).toBe(
      `pivot ${JSON.parse(fs.readFileSync(path.join(repoRoot, "packages/cli/package.json"), "utf8")).version}\n`,
    )
  })

  describe("given serve", () => {
    let server: ChildProcess | undefined
    afterAll(() => stopped(server))

    it("then the viewer's assets are the server package's files, byte for byte", async () => {
      server = spawn(process.execPath, [bin, "serve", demoDb, "--port", "0"], { cwd: dir, env })
      const url = await new Promise<string>((resolve, reject) => {
        let seen = ""
        server!.stdout!.on("data", (chunk: Buffer) => {
          seen += chunk.toString()
          const found = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(seen)
          if (found !== null) resolve(found[1]!)
        })
        server!.on("exit", (code) => reject(new Error(`pivot serve exited ${code}: ${seen}`)))
      })
      const server_ = path.join(repoRoot, "packages/server")
      const files: Record<string, string> = {
        "app.js": path.join(server_, "assets/app.js"),
        "style.css": path.join(server_, "assets/style.css"),
        "uPlot.iife.min.js": path.join(repoRoot, "node_modules/uplot/dist/uPlot.iife.min.js"),
      }
      for (const [name, file] of Object.entries(files)) {
        const response = await fetch(`${url}/assets/${name}`, { headers: { "accept-encoding": "identity" } })
        expect(response.status).toBe(200)
        expect(Buffer.from(await response.arrayBuffer()).equals(fs.readFileSync(file))).toBe(true)
      }
    }, 60_000)
  })
})
