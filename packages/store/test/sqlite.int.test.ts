// The contract against SQLite: each test gets a fresh file in a temporary directory.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { EventStore } from "../src/index.ts"
import { contract } from "./contract.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-store-sqlite-"))
let n = 0

contract({
  name: "sqlite",
  fresh: async () => {
    const filename = path.join(dir, `store-${++n}.db`)
    return { open: () => EventStore.layerSqlite({ filename, pollInterval: "20 millis" }) }
  },
  cleanup: async () => fs.rmSync(dir, { recursive: true, force: true }),
})
