// `Export.decodeExportBytes` (message by message, from the bytes) gives exactly what the whole-text path gives:
// the same decoded export, or the same error naming the same path; and foreign encodings are named.
import { readdirSync, readFileSync } from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "../../core/test/support/runs.ts"
import * as Export from "../src/Export.ts"
import { realExportPath } from "./support/fixtures.ts"

const fixtures = fileURLToPath(new URL("./fixtures/", import.meta.url))

/** The reference: the whole text decoded, parsed and checked in one piece. */
const wholeText = (bytes: Uint8Array) => {
  const text = Export.decodeBytes(bytes)
  if (Result.isFailure(text)) return Result.fail(text.failure.message)
  const parsed = Export.parseExportText(text.success)
  if (Result.isFailure(parsed)) return Result.fail(parsed.failure.message)
  const decoded = Export.decode(parsed.success)
  return Result.isFailure(decoded) ? Result.fail(decoded.failure.message) : Result.succeed(decoded.success)
}

const streamed = (bytes: Uint8Array) => {
  const decoded = Export.decodeExportBytes(bytes)
  return Result.isFailure(decoded) ? Result.fail(decoded.failure.message) : Result.succeed(decoded.success)
}

const files = [
  realExportPath,
  ...readdirSync(fixtures)
    .filter((name) => /\.(json|txt)$/.test(name))
    .map((name) => path.join(fixtures, name)),
  ...readdirSync(path.join(fixtures, "malformed")).map((name) => path.join(fixtures, "malformed", name)),
]

describe("decodeExportBytes", () => {
  it("given every fixture, malformed ones too, then it answers what the whole-text path answers", () => {
    for (const file of files) {
      const bytes = readFileSync(file)
      expect(streamed(bytes), file).toEqual(wholeText(bytes))
    }
  })

  it("property: a real export with one field broken, extra text or cut short answers the same either way", () => {
    const text = readFileSync(realExportPath, "utf8")
    const raw = JSON.parse(text)
    const breakers: ReadonlyArray<(i: number) => string> = [
      (i) => {
        const copy = structuredClone(raw)
        copy.messages[i % copy.messages.length].info.role = "robot"
        return JSON.stringify(copy)
      },
      (i) => {
        const copy = structuredClone(raw)
        const message = copy.messages[i % copy.messages.length]
        message.parts = message.parts.map((p: Record<string, unknown>) => ({ ...p, id: 42 }))
        return JSON.stringify(copy, null, i % 3)
      },
      (i) => {
        const copy = structuredClone(raw)
        copy.messages = copy.messages.slice(0, i % (copy.messages.length + 1))
        return `Exporting session: ${copy.info.id}\n${JSON.stringify(copy, null, 2)}`
      },
      (i) => text.slice(0, Math.floor((text.length * (i % 100)) / 100)),
      (i) => `${text}${i % 2 === 0 ? "\n  \n" : " trailing"}`,
      (i) => JSON.stringify({ messages: raw.messages.slice(0, i % 3), info: raw.info }),
      (i) => {
        // Strings ending in runs of backslashes and escaped quotes: where each string ends must still be found.
        const copy = structuredClone(raw)
        const tricky = `${"\\".repeat(i % 5)}"${"\\".repeat((i >> 3) % 4)}`
        for (const message of copy.messages)
          for (const part of message.parts)
            if (part.type === "text") part.text = `${part.text.slice(0, i % 7)}${tricky}`
        copy.info.title = tricky
        return JSON.stringify(copy, null, i % 2)
      },
      () => JSON.stringify({ info: raw.info, messages: {} }),
      () => JSON.stringify({ info: raw.info }),
    ]
    fc.assert(
      fc.property(fc.nat(breakers.length - 1), fc.nat(10_000), (which, i) => {
        const bytes = new TextEncoder().encode(breakers[which]!(i))
        expect(streamed(bytes)).toEqual(wholeText(bytes))
      }),
      runs(150),
    )
  })

  it("property: strings ending in runs of backslashes or escaped quotes are still read message by message", () => {
    const raw = JSON.parse(readFileSync(realExportPath, "utf8"))
    fc.assert(
      fc.property(fc.nat(4), fc.nat(3), fc.boolean(), (before, after, quoted) => {
        const tricky = `${"\\".repeat(before)}${quoted ? '"' : ""}${"\\".repeat(after)}`
        const copy = structuredClone(raw)
        for (const message of copy.messages)
          for (const part of message.parts) if (part.type === "text") part.text = `${part.text.slice(0, 3)}${tricky}`
        copy.info.title = tricky
        const bytes = new TextEncoder().encode(JSON.stringify(copy))
        let progressed = 0
        // Progress is reported only when the bytes are split into messages (never on the whole-text fallback).
        const decoded = Export.decodeExportBytes(bytes, (done) => {
          progressed = done
        })
        expect(progressed).toBe(copy.messages.length)
        expect(Result.isSuccess(decoded) && decoded.success).toEqual(Result.getOrThrow(wholeText(bytes)))
      }),
      { numRuns: 40 },
    )
  })

  it("given UTF-16 or UTF-32 bytes, then the error names the encoding found", () => {
    const text = '{"info":{},"messages":[]}'
    const le = new Uint8Array(Buffer.from(text, "utf16le"))
    const be = new Uint8Array(Buffer.from(text, "utf16le").swap16())
    const cases: ReadonlyArray<readonly [Uint8Array, string]> = [
      [new Uint8Array([0xff, 0xfe, ...le]), "UTF-16LE (byte-order mark FF FE)"],
      [new Uint8Array([0xfe, 0xff, ...be]), "UTF-16BE (byte-order mark FE FF)"],
      [le, "UTF-16LE (no byte-order mark)"],
      [be, "UTF-16BE (no byte-order mark)"],
      [new Uint8Array([0xff, 0xfe, 0, 0, 0x7b, 0, 0, 0]), "UTF-32LE (byte-order mark FF FE 00 00)"],
      [new Uint8Array([0, 0, 0xfe, 0xff, 0, 0, 0, 0x7b]), "UTF-32BE (byte-order mark 00 00 FE FF)"],
    ]
    for (const [bytes, encoding] of cases) {
      const result = Export.decodeExportBytes(bytes)
      expect(Result.isFailure(result) && result.failure.message).toBe(
        `Invalid OpenCode export: the file is ${encoding}, not UTF-8; convert it first, e.g. iconv -f ${encoding.split(" ")[0]} -t UTF-8`,
      )
    }
    expect(Export.foreignEncoding(new TextEncoder().encode(text))).toBeUndefined()
    expect(Export.foreignEncoding(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b]))).toBeUndefined()
  })
})
