import { defineProject } from "vitest/config"
import { sourceResolve, testFiles } from "../../scripts/vitest.shared.ts"

export default defineProject({
  ...sourceResolve,
  // Not isolated (as core): the package's modules hold no state a test changes; each worker evaluates them once.
  test: { name: "ai", testTimeout: 60_000, ...testFiles, isolate: false },
})
