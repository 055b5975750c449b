import { defineProject } from "vitest/config"
import { sourceResolve, testFiles } from "../../scripts/vitest.shared.ts"

export default defineProject({
  ...sourceResolve,
  // The PostgreSQL server of the conflict probe (Conflicts.slow.test.ts), started and stopped by the store's setup.
  test: { name: "runtime", testTimeout: 60_000, ...testFiles, globalSetup: ["../store/test/globalSetup.ts"] },
})
