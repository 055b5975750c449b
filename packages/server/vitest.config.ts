import { defineProject } from "vitest/config"

export default defineProject({
  test: {
    name: "server",
    testTimeout: 60_000,
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts", "../store/test/globalSetup.ts"],
  },
})
