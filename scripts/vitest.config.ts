import { defineProject } from "vitest/config"
import { setupFiles, sourceResolve } from "./vitest.shared.ts"

export default defineProject({
  ...sourceResolve,
  test: { name: "scripts", testTimeout: 60_000, include: ["test/**/*.test.ts"], setupFiles },
})
