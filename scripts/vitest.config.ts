import { defineProject } from "vitest/config"
import { sourceResolve, testFiles } from "./vitest.shared.ts"

export default defineProject({
  ...sourceResolve,
  test: { name: "scripts", testTimeout: 60_000, ...testFiles },
})
