import { defineProject } from "vitest/config"
import { sourceResolve, testFiles } from "../../scripts/vitest.shared.ts"

export default defineProject({
  ...sourceResolve,
  // Not isolated (as core): the store's modules hold no state a test changes (the SQLite driver's opener is chosen
  // once per process either way); each worker evaluates them once instead of once per file.
  test: { name: "store", testTimeout: 60_000, ...testFiles, isolate: false, globalSetup: ["test/globalSetup.ts"] },
})
