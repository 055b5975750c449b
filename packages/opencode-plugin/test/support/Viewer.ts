// `pivot serve` on the plugin's store, watched in a real headless Chromium (Debian's, scripts/chromium.sh): the session
// page's live head, read while OpenCode writes.
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import type { BrowserContext, Page } from "playwright-core"
import { chromiumPath, launch } from "../../../server/test/support/chromium.ts"
import { ROOT } from "./OpenCode.ts"

/** A viewer: the `pivot serve` child and a Chromium page on it. */
export interface Viewer {
  readonly base: string
  readonly page: Page
  /** The session page's live head (`#live[data-head]`): the stream version the page has seen. */
  readonly head: () => Promise<number>
  readonly close: () => Promise<void>
}

/** Starts `pivot serve DB` on a free port and opens Chromium on `path`. */
export const open = async (db: string, path: string): Promise<Viewer> => {
  // Debian's Chromium, installed when missing, as the viewer's own browser tests launch it.
  const executablePath = chromiumPath()
  const child: ChildProcess = spawn(
    process.execPath,
    ["--conditions=@pivot/source", Path.join(ROOT, "packages/cli/src/bin.ts"), "serve", db, "--port", "0"],
    { stdio: ["ignore", "pipe", "pipe"] },
  )
  const base = await new Promise<string>((resolve, reject) => {
    let out = ""
    const timer = setTimeout(() => reject(new Error(`pivot serve did not start: ${out}`)), 60_000)
    child.stdout!.on("data", (d: Buffer) => {
      out += d.toString("utf8")
      const url = /on (http:\/\/127\.0\.0\.1:\d+)\//.exec(out)?.[1]
      if (url !== undefined) {
        clearTimeout(timer)
        resolve(url)
      }
    })
    child.stderr!.resume()
  })
  const profile = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-viewer-"))
  const context: BrowserContext = await launch(profile, executablePath)
  const page = await context.newPage()
  await page.goto(`${base}${path}`)
  await page.waitForSelector("body[data-ready='true']", { timeout: 30_000 })
  return {
    base,
    page,
    // The head arrives with the page's first live event, which may come after the page says it is ready.
    head: async () => {
      await page.waitForSelector("#live[data-head]", { state: "attached", timeout: 30_000 })
      return Number(await page.getAttribute("#live", "data-head"))
    },
    close: async () => {
      await context.close()
      child.kill("SIGTERM")
      Fs.rmSync(profile, { recursive: true, force: true })
    },
  }
}
