// The run's PostgreSQL test server (the store's globalSetup, listed in this project's config) for a slow test file: a
// schema of its own, dropped when the file ends.
import { execFileSync } from "node:child_process"
import { afterAll, inject } from "vitest"

declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string
    pgError: string
  }
}

/** The server's URL, why it could not start ("" when it did), and a schema named `prefix_<pid>` dropped after the file. */
export const testSchema = (
  prefix: string,
): { readonly url: string; readonly setupError: string; readonly schema: string } => {
  const url = inject("pgUrl")
  const setupError = inject("pgError")
  const schema = `${prefix}_${process.pid}`
  afterAll(() => {
    if (setupError !== "") return
    const bin = execFileSync("bash", ["-c", "ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1"], {
      encoding: "utf8",
    })
    execFileSync(`${bin.trim()}/psql`, [url, "-c", `DROP SCHEMA IF EXISTS ${schema} CASCADE`], { stdio: "ignore" })
  })
  return { url, setupError, schema }
}
