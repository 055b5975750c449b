import { defineProject } from "vitest/config"
import { sourceResolve, testFiles } from "../../scripts/vitest.shared.ts"

export default defineProject({
  ...sourceResolve,
  // The PostgreSQL server of the conflict probe (Conflicts.slow.test.ts), started and stopped by the store's setup.
  // Not isolated (as core): the runtime's and the store's modules hold no state a test changes (the SQLite driver's
  // opener is chosen once per process either way); each worker evaluates them once instead of once per file.
  test: {
    name: "runtime",
    testTimeout: 60_000,
    ...testFiles,
    isolate: false,
    globalSetup: ["../store/test/globalSetup.ts"],
  },
})
