// The run's PostgreSQL test server (the store's globalSetup, listed in each project's config that has PostgreSQL
// tests) for a slow test file: its URL, why it could not start, schemas of the file's own and their cleanup. The one
// home of that setup for the store's and the runtime's `*.pg.*` / `*.postgres.*` slow tests.
import { execFileSync } from "node:child_process"
import { afterAll, inject } from "vitest"

declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string
    pgError: string
  }
}

/** The run's server: its URL, and why it could not start ("" when it did). */
export const server = (): { readonly url: string; readonly setupError: string } => ({
  url: inject("pgUrl"),
  setupError: inject("pgError"),
})

/** The folder of the newest installed PostgreSQL's programs (`psql`, `pg_ctl`): the server scripts/postgres.sh runs. */
export const bin = (): string =>
  execFileSync("bash", ["-c", "ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1"], { encoding: "utf8" }).trim()

/** A schema name of this file's own: `prefix_<pid>_<time>`. */
export const schemaName = (prefix: string): string => `${prefix}_${process.pid}_${Date.now().toString(36)}`

/** Drops the schemas, best effort: a leftover is harmless on the run's throwaway server. */
export const dropSchemas = (url: string, schemas: ReadonlyArray<string>): void => {
  if (schemas.length === 0) return
  try {
    const drop = schemas.map((schema) => `DROP SCHEMA IF EXISTS ${schema} CASCADE;`).join("\n")
    execFileSync(`${bin()}/psql`, [url, "-q", "-c", drop], { stdio: "ignore" })
  } catch {
    // best effort
  }
}

/** The server's URL, why it could not start ("" when it did), and a schema (`schemaName`) dropped after the file. */
export const testSchema = (
  prefix: string,
): { readonly url: string; readonly setupError: string; readonly schema: string } => {
  const { url, setupError } = server()
  const schema = schemaName(prefix)
  afterAll(() => {
    if (setupError === "") dropSchemas(url, [schema])
  })
  return { url, setupError, schema }
}
