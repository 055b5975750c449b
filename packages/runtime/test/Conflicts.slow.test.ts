// Several processes executing commands on one session at the same time, on SQLite and PostgreSQL, through the conflict
// probe (scripts/bench/conflicts.ts): with the default retry policy no command fails, and the stream holds exactly the
// commands that succeeded. The probe reports the retries; the run counts only if the processes really conflicted.
// The turns workload compacts the shared session again and again, so steps answer messages a pivot of another process
// dropped from the live state (issue 18 item 4: 1–14 refused per run before the fix).

import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, inject, it } from "vitest"

declare module "vitest" {
  // Provided by the store's setup (the PostgreSQL test server), listed in this project's config.
  export interface ProvidedContext {
    pgUrl: string
    pgError: string
  }
}

const probe = fileURLToPath(new URL("../../../scripts/bench/conflicts.ts", import.meta.url))

interface Report {
  readonly backend: string
  readonly commands: number
  readonly succeeded: number
  readonly failed: number
  readonly retries: number
  readonly otherErrors: number
  readonly byError: Record<string, number>
  readonly storedMatches: boolean
  readonly pivots: number
}

const runProbe = (backend: string, workload: "messages" | "turns"): Report => {
  // The probe's PostgreSQL is this run's test server (the store's globalSetup), stopped when the run ends.
  if (backend === "postgres" && inject("pgError") !== "") throw new Error(inject("pgError"))
  const out = execFileSync(
    process.execPath,
    [
      "--conditions=@pivot/source",
      probe,
      ...["--backend", backend, "--workload", workload, "--processes", "4", "--commands", "120"],
    ],
    {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, PIVOT_PG_URL: inject("pgUrl") },
    },
  )
  const line = out.split("\n").find((l) => l.startsWith(`{"backend":"${backend}"`))
  if (line === undefined) throw new Error(`no report from the probe: ${out}`)
  return JSON.parse(line)
}

describe("commands from several processes on one session", () => {
  for (const backend of ["sqlite", "postgres"]) {
    it(`given 4 processes × 120 commands on one session (${backend}), then none fails and every success is stored once`, () => {
      const report = runProbe(backend, "messages")
      expect(report).toMatchObject({ commands: 480, succeeded: 480, failed: 0, otherErrors: 0, storedMatches: true })
      expect(report.retries).toBeGreaterThan(0)
    }, 120_000)

    it(`given 4 processes × 60 agent turns that compact one session (${backend}), then no call fails and every acknowledged message is stored once`, () => {
      const report = runProbe(backend, "turns")
      expect(report).toMatchObject({ commands: 480, succeeded: 480, failed: 0, otherErrors: 0, byError: {} })
      expect(report.storedMatches).toBe(true)
      expect(report.pivots).toBeGreaterThan(5)
    }, 180_000)
  }
})
