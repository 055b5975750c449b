/**
 * A repeated `SessionLog.forget` is idempotent on the memory store and on a SQLite file with the read models (what
 * `pivot forget` opens): nothing recorded when nothing with text came since, the new text erased when some did.
 * PostgreSQL: `Forget.postgres.slow.test.ts`.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, it } from "vitest"
import { EventStore, ReadModels } from "../../src/index.ts"
import { forgetAgain } from "./support/forgetAgain.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-forget-again-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("forget, repeated", () => {
  it("on the memory store: a second forget records nothing; new text since is erased and marked", () =>
    forgetAgain(EventStore.layerMemory(), "ses_again_memory"))

  it("on a SQLite file with the read models: a second forget records nothing; new text since is erased and marked", () =>
    forgetAgain(ReadModels.layerSqlite({ filename: path.join(dir, "again.db") }), "ses_again_sqlite"))
})
