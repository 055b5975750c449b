// Makes sure Debian's Chromium is installed for the browser tests (scripts/chromium.sh installs it when missing) and
// hands its path to them, when a slow-lane file runs (the browser tests are `*.slow.test.ts`). A failure is handed over
// too, so the browser tests fail with the reason instead of skipping.
import type { TestProject } from "vitest/node"
import { runsSlowFiles } from "../../store/test/globalSetup.ts"
import { chromiumPath } from "./support/chromium.ts"

declare module "vitest" {
  export interface ProvidedContext {
    chromiumPath: string
    chromiumError: string
    // Provided by the store's setup (the PostgreSQL test server), also listed in this project's config.
    pgUrl: string
    pgError: string
  }
}

export default async function setup(project: TestProject): Promise<void> {
  if (!(await runsSlowFiles(project))) {
    project.provide("chromiumPath", "")
    project.provide("chromiumError", "Chromium is looked for only for the slow lane's files (*.slow.test.ts)")
    return
  }
  try {
    project.provide("chromiumPath", chromiumPath())
    project.provide("chromiumError", "")
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr
    project.provide("chromiumPath", "")
    project.provide("chromiumError", `scripts/chromium.sh failed: ${String(stderr ?? error)}`)
  }
}
