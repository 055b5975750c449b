// The viewer of a browser test file (slow lane): a session written to a SQLite store as pivot writes it, `pivot
// serve` on that store, and a page of the headless Chromium the run's setup found (globalSetup.ts).
import * as path from "node:path"
import type { Events } from "@pivot/core"
import type { Page } from "playwright-core"
import { expect, inject } from "vitest"
import { Serve } from "../../src/index.ts"
import { launch } from "./chromium.ts"
import { writeSqlite } from "./play.ts"

/** A served store and a Chromium page on it; `close` closes both. */
export interface Viewer {
  readonly base: string
  readonly page: Page
  readonly close: () => Promise<void>
}

/**
 * Writes the session's events to the SQLite store `db`, serves it on a free port and opens a page (its Chromium
 * profile beside the store). Fails, with the setup's reason, when the run found no Chromium.
 */
export const open = async (db: string, sessionId: string, events: ReadonlyArray<Events.Event>): Promise<Viewer> => {
  expect(inject("chromiumError")).toBe("")
  await writeSqlite(db, sessionId, events)
  const server = await Serve.start({ source: db, port: 0 })
  try {
    const context = await launch(path.join(path.dirname(db), "profile"), inject("chromiumPath"))
    const page = await context.newPage()
    return {
      base: `http://127.0.0.1:${server.port}`,
      page,
      close: async () => {
        await context.close()
        await server.close()
      },
    }
  } catch (error) {
    await server.close()
    throw error
  }
}

/** Waits until the page is drawn (`body[data-ready]`) and shows no error. */
export const ready = async (p: Page) => {
  await p.waitForSelector("body[data-ready='true'], #error", { timeout: 20_000 })
  expect(await p.locator("#error").count()).toBe(0)
}
