import { defineProject } from "vitest/config"
import { sourceResolve, testFiles } from "../../scripts/vitest.shared.ts"

export default defineProject({
  ...sourceResolve,
  test: { name: "ai", testTimeout: 60_000, ...testFiles },
})
