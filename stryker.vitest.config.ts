// The Vitest config Stryker runs (`npm run mutate`): only the tests that exercise the mutated rules.
// Stryker copies the repository into a sandbox and links node_modules back to the original, where the workspace
// links (`@pivot/core` …) point at the unmutated sources; the aliases make every import resolve inside the sandbox.
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

const source = (pkg: string) => fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url))

export default defineConfig({
  resolve: {
    alias: {
      "@pivot/core": source("core"),
      "@pivot/runtime": source("runtime"),
      "@pivot/store": source("store"),
    },
  },
  test: {
    // Properties try 50 cases each here (1000 in the suite): each one reruns for every mutant it covers.
    env: { PIVOT_PROPERTY_RUNS: "50" },
    projects: [
      {
        extends: true,
        test: { name: "core", root: "packages/core", testTimeout: 60_000, include: ["test/**/*.test.ts"] },
      },
      // The runtime's rule functions are tested on their own (Compaction.test.ts), and the texts a redaction plugin sees
      // through one compaction (PluginRedactTexts.test.ts); the rest of the process manager is tested end to end through
      // stores and a summariser (Plugins.test.ts runs 1,000-case properties), too slow to rerun for each mutant here.
      {
        extends: true,
        test: {
          name: "runtime",
          root: "packages/runtime",
          testTimeout: 60_000,
          include: ["test/Compaction.test.ts", "test/PluginRedactTexts.test.ts"],
        },
      },
      // The runtime's half of snapshots (format, checksum, session and version checks; Sessions.ts); the test that
      // kills real processes while they write snapshots is in the slow lane (Snapshots.kill.slow.test.ts).
      {
        extends: true,
        test: {
          name: "runtime-snapshots",
          root: "packages/runtime",
          testTimeout: 60_000,
          include: ["test/Snapshots.test.ts", "test/SnapshotDecode.test.ts"],
        },
      },
      // The user projections' rules on SQLite (store/src/projections/Projections.ts); PostgreSQL's twin is slow-lane.
      {
        extends: true,
        test: {
          name: "store-projections",
          root: "packages/store",
          testTimeout: 60_000,
          include: [
            "test/projections/Projections.int.test.ts",
            "test/projections/Projections.rules.int.test.ts",
            "test/projections/Projections.edges.int.test.ts",
            "test/projections/Projections.failures.int.test.ts",
            "test/projections/backoff.test.ts",
          ],
        },
      },
    ],
  },
})
