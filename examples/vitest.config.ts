import { defineProject } from "vitest/config"
import { sourceResolve } from "../scripts/vitest.shared.ts"

export default defineProject({
  ...sourceResolve,
  test: { name: "examples", testTimeout: 60_000, include: ["test/**/*.test.ts"] },
})
