import { defineProject } from "vitest/config"
import { sourceResolve } from "../../scripts/vitest.shared.ts"

export default defineProject({
  ...sourceResolve,
  test: {
    name: "server",
    testTimeout: 60_000,
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts", "../store/test/globalSetup.ts"],
  },
})
