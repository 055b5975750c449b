// The PostgreSQL server of the slow lane's PostgreSQL tests: a throwaway server of this run's own (scripts/postgres.sh
// in a fresh folder), unless PIVOT_PG_URL names one, its URL handed to the test files. The tests stop what they start:
// the teardown stops the server and removes its folder, and a server some other run started is never touched. Started
// only when a `*.slow.test.ts` file of the project runs (`npm test` runs none). A failure is handed over too, so those
// files fail with the reason instead of skipping.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string
    pgError: string
  }
}

const script = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../scripts/postgres.sh")

/** Whether this run includes a slow-lane file of the project (the CLI's file filters applied, when there are some). */
export const runsSlowFiles = async (project: Pick<TestProject, "globTestFiles" | "vitest">): Promise<boolean> => {
  // `filenamePattern` holds the CLI's file filters during a run; it is not typed, so it is read defensively.
  const filters = (project.vitest as { filenamePattern?: Array<string> }).filenamePattern
  const { testFiles } = await project.globTestFiles(filters)
  return testFiles.some((file) => file.endsWith(".slow.test.ts"))
}

/** Runs scripts/postgres.sh on a cluster folder; the script prints the URL on start. */
const postgres = (dir: string, ...args: Array<string>) =>
  execFileSync("bash", [script, ...args], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, PIVOT_PG_DIR: dir },
  }).trim()

/** Stops the server in `dir` and removes its folder (and the lock file postgres.sh keeps beside it). */
export const stop = (dir: string): void => {
  try {
    postgres(dir, "stop")
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
    fs.rmSync(`${dir}.lock`, { force: true })
  }
}

export default async function setup(
  project: Pick<TestProject, "provide" | "globTestFiles" | "vitest">,
): Promise<(() => void) | undefined> {
  const fromEnv = process.env.PIVOT_PG_URL
  if (fromEnv !== undefined && fromEnv !== "") {
    project.provide("pgUrl", fromEnv)
    project.provide("pgError", "")
    return undefined
  }
  if (!(await runsSlowFiles(project))) {
    project.provide("pgUrl", "")
    project.provide("pgError", "no PostgreSQL server: it is started for the slow lane's files (*.slow.test.ts) only")
    return undefined
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-pg-test-"))
  // The server runs as the postgres user when root starts it: it must be able to reach its folder.
  fs.chmodSync(dir, 0o755)
  try {
    project.provide("pgUrl", postgres(dir))
    project.provide("pgError", "")
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr
    project.provide("pgUrl", "")
    project.provide("pgError", `scripts/postgres.sh failed: ${String(stderr ?? error)}`)
  }
  return () => stop(dir)
}
