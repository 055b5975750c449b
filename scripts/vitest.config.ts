import { defineProject } from "vitest/config"

export default defineProject({
  test: { name: "scripts", testTimeout: 60_000, include: ["test/**/*.test.ts"] },
})
