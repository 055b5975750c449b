// What the store's globalSetup provides to the slow lane's PostgreSQL tests (packages/store/test/globalSetup.ts declares
// the same): typed here too, so this package's tests typecheck on their own (`tsc -b packages/opencode-plugin`).
import "vitest"

declare module "vitest" {
  export interface ProvidedContext {
    pgUrl: string
    pgError: string
  }
}
