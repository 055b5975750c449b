// The headless Chromium that watches the viewer, the one setup of the browser tests (the server's, the CLI's demo, the
// plugin's live viewer) and the viewer bench (scripts/bench/serve.ts): Debian's Chromium (scripts/chromium.sh installs
// it when missing), the flags it needs on these machines, a profile of its own and the screenshots' viewport.
import { execFileSync } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type BrowserContext, chromium } from "playwright-core"

const script = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../../../scripts/chromium.sh")

/** The flags Chromium needs on these machines (no sandbox as root, no background connections to a closed network). */
export const FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
]

/**
 * Debian's Chromium's path, installed when missing (scripts/chromium.sh); throws when the script fails, its standard
 * error in the thrown error's `stderr`.
 */
export const chromiumPath = (): string =>
  execFileSync("bash", [script], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim()

/** A headless Chromium with its own profile in the folder `profile`, at the screenshots' viewport (1280×860). */
export const launch = (profile: string, executablePath: string = chromiumPath()): Promise<BrowserContext> =>
  chromium.launchPersistentContext(profile, {
    executablePath,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 860 },
  })
