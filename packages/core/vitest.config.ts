import { defineProject } from "vitest/config"
import { sourceResolve, testFiles } from "../../scripts/vitest.shared.ts"

export default defineProject({
  ...sourceResolve,
  // Pure, CPU-bound properties (no IO to hang on) whose time follows the seed's sizes and the machine's load: on the
  // shared 2-core machine several took 40–130 s under load (issue 18), past a 60 s limit. Five minutes, as the other
  // packages' long properties have.
  test: { name: "core", testTimeout: 300_000, ...testFiles },
})
