import { defineProject } from "vitest/config"
import { testFiles } from "../../scripts/vitest.shared.ts"

export default defineProject({
  test: {
    name: "server",
    testTimeout: 60_000,
    ...testFiles,
    globalSetup: ["test/globalSetup.ts", "../store/test/globalSetup.ts"],
  },
})
