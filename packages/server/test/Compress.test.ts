// Which encoding a request's Accept-Encoding asks for (Compress.choose, its one home), at the edges of its weights.
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import type { HttpBody } from "effect/http"
import { HttpServerResponse } from "effect/http"
import { describe, expect, it } from "vitest"
import { Compress } from "../src/index.ts"

describe("Compress.choose", () => {
  it("answers br or gzip when accepted, br on a tie, none when neither is", () => {
    expect(Compress.choose(undefined)).toBeUndefined()
    expect(Compress.choose("")).toBeUndefined()
    expect(Compress.choose("identity")).toBeUndefined()
    expect(Compress.choose("deflate")).toBeUndefined()
    expect(Compress.choose("gzip")).toBe("gzip")
    expect(Compress.choose("br")).toBe("br")
    expect(Compress.choose("gzip, deflate, br")).toBe("br")
    expect(Compress.choose("GZIP, BR")).toBe("br")
    expect(Compress.choose("*")).toBe("br")
  })

  it("weighs by q: 0 refuses, the smallest positive weight accepts, the higher weight wins", () => {
    expect(Compress.choose("gzip;q=0")).toBeUndefined()
    expect(Compress.choose("gzip;q=0.001")).toBe("gzip")
    expect(Compress.choose("br;q=0, gzip")).toBe("gzip")
    expect(Compress.choose("br;q=0.5, gzip;q=0.6")).toBe("gzip")
    expect(Compress.choose("br;q=0.6, gzip;q=0.6")).toBe("br")
    expect(Compress.choose("br;q=0.7, gzip;q=0.6")).toBe("br")
    expect(Compress.choose("*;q=0, gzip")).toBe("gzip")
    expect(Compress.choose("*;q=0")).toBeUndefined()
    expect(Compress.choose("gzip; q=1.0 , br ; q = 0")).toBe("gzip")
    expect(Compress.choose("gzip;q=x")).toBeUndefined()
  })

  it("reads a malformed weight as 0 and a weight above 1 as malformed", () => {
    expect(Compress.choose("gzip;q=x")).toBeUndefined()
    expect(Compress.choose("gzip;q=1.001")).toBeUndefined()
    expect(Compress.choose("gzip;q=1.000")).toBe("gzip")
    expect(Compress.choose("gzip;q=0.0001")).toBeUndefined()
  })
})

describe("Compress.response", () => {
  const encodingOf = (bytes: number, accept = "gzip, br") => {
    const res = Compress.response(HttpServerResponse.text("x".repeat(bytes)), accept)
    return { encoding: res.headers["content-encoding"], vary: res.headers.vary, body: res.body }
  }

  it("encodes a body of MIN_BYTES or more, leaves one byte less as it is, and always says it varies", () => {
    expect(Compress.MIN_BYTES).toBe(1024)
    expect(encodingOf(1023)).toMatchObject({ encoding: undefined, vary: "accept-encoding" })
    expect(encodingOf(1024)).toMatchObject({ encoding: "br", vary: "accept-encoding" })
    expect(encodingOf(1025, "gzip")).toMatchObject({ encoding: "gzip" })
    expect(encodingOf(100_000, "identity").encoding).toBeUndefined()
  })

  it("encodes bytes that decode to the body, for both encodings, and the same again from its cache", () => {
    const text = JSON.stringify({ rows: Array.from({ length: 5_000 }, (_, i) => ({ i, v: `value ${i}` })) })
    for (const [accept, decode] of [
      ["gzip", gunzipSync],
      ["br", brotliDecompressSync],
    ] as const)
      for (let round = 0; round < 2; round++) {
        const res = Compress.response(HttpServerResponse.text(text), accept)
        expect(res.headers["content-encoding"]).toBe(accept)
        const body = res.body as HttpBody.Uint8Array
        expect(body.contentLength).toBeLessThan(text.length / 5)
        expect(decode(body.body).toString("utf8")).toBe(text)
      }
  })
})
