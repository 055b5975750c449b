import { defineProject } from "vitest/config"
import { sourceResolve, testFiles } from "../../scripts/vitest.shared.ts"

export default defineProject({
  ...sourceResolve,
  test: { name: "store", testTimeout: 60_000, ...testFiles, globalSetup: ["test/globalSetup.ts"] },
})
