/**
 * The read models' caches after a forget made elsewhere (issue 18 #1), on a SQLite file: a store layer A holding a
 * session's folded read models in memory (and a snapshot of them) must not write the forgotten text back when it
 * appends next, whether the forget came from another layer with the read-model hooks (`pivot forget`) or from a bare
 * event store without them. PostgreSQL: `ForgetCaches.postgres.slow.test.ts`.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { EventStore, ReadModels } from "../../src/index.ts"
import { forgetBesideA, SECRET } from "./support/forgetCaches.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-forget-caches-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const bytesHold = (filename: string, word: string) =>
  ["", "-wal", "-shm"]
    .filter((s) => fs.existsSync(filename + s))
    .some((s) => fs.readFileSync(filename + s).includes(Buffer.from(word)))

describe("read models after a forget made by another store layer (SQLite)", () => {
  // A bare store deletes the key but not the read models' rows: their old pages stay in the file until SQLite next
  // checkpoints, so only the layer with the hooks (what `pivot forget` opens) is held to the file bytes.
  for (const [name, forgetter, bytes] of [
    ["with the read-model hooks (pivot forget)", (filename: string) => ReadModels.layerSqlite({ filename }), true],
    ["from a bare event store", (filename: string) => EventStore.layerSqlite({ filename }), false],
  ] as const)
    for (const snapshots of [false, { every: 2 }] as const)
      it(`given A holding the read models in memory (snapshots ${JSON.stringify(snapshots)}), when B forgets ${name} and A appends, then no read model holds the forgotten text`, async () => {
        const filename = path.join(dir, `${name.replace(/\W+/g, "-")}-${snapshots === false ? "none" : "every"}.db`)
        await forgetBesideA("ses_forget_caches", ReadModels.layerSqlite({ filename, snapshots }), forgetter(filename))
        if (bytes) expect(bytesHold(filename, SECRET)).toBe(false)
      })
})
