// The tests stop what they start: the PostgreSQL server the slow lane's setup starts is stopped, and its folder
// removed, by the setup's teardown; a run without slow files starts none.
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import setup, { stop } from "./globalSetup.ts"

/** A fake project: the files this run would glob, and what the setup provides. */
const project = (files: ReadonlyArray<string>) => {
  const provided = new Map<string, string>()
  return {
    provided,
    project: {
      provide: (key: string, value: string) => void provided.set(key, value),
      globTestFiles: async () => ({ testFiles: [...files], typecheckTestFiles: [] }),
      vitest: {},
    } as unknown as Parameters<typeof setup>[0],
  }
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port })
    socket.once("connect", () => {
      socket.destroy()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })

/** The setup's cluster folders that exist now, with the port each server was started on. */
const clusters = () =>
  fs
    .readdirSync(os.tmpdir())
    .filter((name) => name.startsWith("pivot-pg-test-") && !name.endsWith(".lock"))
    .map((name) => path.join(os.tmpdir(), name))

const saved = process.env.PIVOT_PG_URL
afterEach(() => {
  if (saved === undefined) delete process.env.PIVOT_PG_URL
  else process.env.PIVOT_PG_URL = saved
})

describe("the PostgreSQL test server's lifetime (store/test/globalSetup.ts)", () => {
  it("given a run with a slow file, then a server of its own answers, and after the teardown it is stopped and its folder gone", async () => {
    delete process.env.PIVOT_PG_URL
    const { provided, project: fake } = project(["/repo/packages/store/test/x.slow.test.ts"])
    const teardown = await setup(fake)
    expect(provided.get("pgError")).toBe("")
    const port = new URL(provided.get("pgUrl")!).port
    // Its folder is the one whose server listens on that port (other runs may have folders of their own).
    const folder = clusters().find((dir) => fs.readFileSync(path.join(dir, "port"), "utf8").trim() === port)
    try {
      expect(folder).toBeDefined()
      expect(await accepts(Number(port))).toBe(true)
      expect(teardown).toBeTypeOf("function")
    } finally {
      teardown?.()
      if (teardown === undefined && folder !== undefined) stop(folder) // the defect: clean up after it anyway
    }
    expect(await accepts(Number(port))).toBe(false)
    expect(fs.existsSync(folder!)).toBe(false)
  }, 60_000)

  it("given a run without slow files, then no server is started and the files that would need one are told why", async () => {
    delete process.env.PIVOT_PG_URL
    const before = clusters()
    const { provided, project: fake } = project(["/repo/packages/store/test/Event.test.ts"])
    const teardown = await setup(fake)
    expect(teardown).toBeUndefined()
    expect(provided.get("pgUrl")).toBe("")
    expect(provided.get("pgError")).toMatch(/slow/)
    expect(clusters()).toEqual(before)
  })

  it("given PIVOT_PG_URL, then that server is used and nothing is started or stopped", async () => {
    process.env.PIVOT_PG_URL = "postgres://postgres@127.0.0.1:1/elsewhere"
    const { provided, project: fake } = project(["/repo/packages/store/test/x.slow.test.ts"])
    expect(await setup(fake)).toBeUndefined()
    expect(provided.get("pgUrl")).toBe("postgres://postgres@127.0.0.1:1/elsewhere")
  })
})
