/**
 * Terminal styling for the demo's commentary: ANSI colours when writing to a terminal, plain text otherwise, plus the
 * small formatting helpers (numbers, the usage bar, truncation) it shares.
 */
import { Text } from "@pivot/core"

/** Text decorations; each returns its input unchanged in plain mode. */
export interface Style {
  readonly bold: (text: string) => string
  readonly dim: (text: string) => string
  readonly red: (text: string) => string
  readonly green: (text: string) => string
  readonly yellow: (text: string) => string
  readonly magenta: (text: string) => string
  readonly cyan: (text: string) => string
}

const same = (text: string) => text
const sgr = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`

/** No decoration: for pipes, files and tests. */
export const plain: Style = { bold: same, dim: same, red: same, green: same, yellow: same, magenta: same, cyan: same }

/** ANSI colours. */
export const ansi: Style = {
  bold: sgr(1, 22),
  dim: sgr(2, 22),
  red: sgr(31, 39),
  green: sgr(32, 39),
  yellow: sgr(33, 39),
  magenta: sgr(35, 39),
  cyan: sgr(36, 39),
}

/** Colours only on a terminal, and never when `NO_COLOR` is set (https://no-color.org). */
export const forOutput = (isTTY: boolean, env: Readonly<Record<string, string | undefined>>): Style =>
  isTTY && (env.NO_COLOR === undefined || env.NO_COLOR === "") ? ansi : plain

/** `12,345`. */
export const count = (n: number): string => Text.thousands(n)

/** `[#####-----]`: `used` out of `total` in `width` cells, coloured by how full it is. */
export const bar = (style: Style, used: number, total: number, width = 20): string => {
  const ratio = total > 0 ? Math.min(1, used / total) : 1
  const filled = Math.round(ratio * width)
  const paint = ratio >= 0.9 ? style.red : ratio >= 0.7 ? style.yellow : style.green
  return `[${paint("#".repeat(filled))}${style.dim("-".repeat(width - filled))}]`
}

/** Cuts `text` to `width` characters, ending with `…` when cut. */
export const truncate = (text: string, width: number): string =>
  text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`
