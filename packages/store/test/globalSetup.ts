// Starts the throwaway PostgreSQL server (scripts/postgres.sh) unless PIVOT_PG_URL names one, and hands its URL to
// the Postgres test files. A failure is handed over too, so those files fail with the reason instead of skipping.
import { execFileSync } from "node:child_process"
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

export default function setup(project: TestProject): void {
  const fromEnv = process.env.PIVOT_PG_URL
  if (fromEnv !== undefined && fromEnv !== "") {
    project.provide("pgUrl", fromEnv)
    project.provide("pgError", "")
    return
  }
  try {
    const url = execFileSync("bash", [script], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim()
    project.provide("pgUrl", url)
    project.provide("pgError", "")
  } catch (error) {
    const stderr = (error as { stderr?: unknown }).stderr
    project.provide("pgUrl", "")
    project.provide("pgError", `scripts/postgres.sh failed: ${String(stderr ?? error)}`)
  }
}
