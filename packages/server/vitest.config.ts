import { defineProject } from "vitest/config"
import { setupFiles } from "../../scripts/vitest.shared.ts"

export default defineProject({
  test: {
    name: "server",
    testTimeout: 60_000,
    include: ["test/**/*.test.ts"],
    setupFiles,
    globalSetup: ["test/globalSetup.ts", "../store/test/globalSetup.ts"],
  },
})
