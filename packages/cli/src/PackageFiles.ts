/**
 * Files the CLI package ships beside its code (its package.json, the demo's example), found from the package's root
 * as Node resolves it — not from this module's place — so the same code reads them from src/, from dist/ and from
 * the bundle in dist/bundle/ (ADR 0033).
 */
import { createRequire } from "node:module"
import * as path from "node:path"

/** The folder holding the CLI package's package.json. */
export const packageRoot: string = path.dirname(createRequire(import.meta.url).resolve("@pivot/cli/package.json"))

/** The absolute path of a file in the CLI package, given relative to its root (e.g. `examples/coding-session.json`). */
export const packageFile = (relative: string): string => path.join(packageRoot, relative)
