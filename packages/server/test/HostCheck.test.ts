// The DNS-rebinding guard's rule at its edges: which Host headers name a loopback viewer (HostCheck, its one home).
import { describe, expect, it } from "vitest"
import { HostCheck } from "../src/index.ts"

const bound = { host: "127.0.0.1", port: 4319 }
const accepted = (header: string | undefined, on: HostCheck.Bound = bound) =>
  HostCheck.refusal(header, on) === undefined

describe("HostCheck.isLoopback", () => {
  it("is localhost, ::1 and exactly the dotted-decimal addresses of 127.0.0.0/8", () => {
    for (const host of [
      "localhost",
      "LocalHost",
      "::1",
      "[::1]",
      "127.0.0.0",
      "127.0.0.1",
      "127.255.255.255",
      "127.1.2.3",
    ])
      expect(HostCheck.isLoopback(host), host).toBe(true)
    for (const host of [
      "126.255.255.255",
      "128.0.0.0",
      "127.0.0.256",
      "127.256.0.1",
      "127.0.0",
      "127.0.0.1.2",
      "127.0.0.1a",
      "127.0.0.-1",
      "0x7f.0.0.1",
      "::2",
      "0.0.0.0",
      "localhost.example",
      "",
    ])
      expect(HostCheck.isLoopback(host), host).toBe(false)
  })
})

describe("HostCheck.refusal", () => {
  it("accepts a loopback name on the bound port, and the port only (port − 1 and + 1 are refused)", () => {
    for (const name of ["127.0.0.1", "localhost", "[::1]", "127.9.9.9", "LOCALHOST", "localhost."])
      expect(accepted(`${name}:4319`), name).toBe(true)
    expect(accepted("127.0.0.1:4318")).toBe(false)
    expect(accepted("127.0.0.1:4320")).toBe(false)
  })

  it("takes an absent port as 80", () => {
    expect(accepted("localhost", { host: "127.0.0.1", port: 80 })).toBe(true)
    expect(accepted("localhost", bound)).toBe(false)
    expect(accepted("localhost:80", { host: "127.0.0.1", port: 80 })).toBe(true)
  })

  it("accepts the bound address as written, IPv6 in brackets", () => {
    expect(accepted("[::1]:4319", { host: "::1", port: 4319 })).toBe(true)
    expect(accepted("[0:0:0:0:0:0:0:1]:4319", { host: "0:0:0:0:0:0:0:1", port: 4319 })).toBe(true)
    expect(accepted("[0:0:0:0:0:0:0:1]:4319", bound)).toBe(false)
  })

  it("refuses any other name, a missing or malformed header and an out-of-range port, in one line naming why", () => {
    const cases: Array<[string | undefined, RegExp]> = [
      ["attacker.example:4319", /^host "attacker\.example:4319" is not this server \(DNS rebinding guard\)/],
      ["attacker.example", /is not this server/],
      ["127.0.0.1.nip.io:4319", /is not this server/],
      ["localhost.attacker.example:4319", /is not this server/],
      ["[::2]:4319", /is not this server/],
      ["127.0.0.256:4319", /is not this server/],
      [undefined, /^the request names no host \(Host header\)/],
      ["", /^the request names no host/],
      ["localhost:4319:4319", /^malformed Host header/],
      ["::1:4319", /^malformed Host header/],
      ["localhost:65536", /^malformed Host header/],
      ["localhost:", /^malformed Host header/],
      ["user@localhost:4319", /is not this server/],
    ]
    for (const [header, reason] of cases) {
      const refused = HostCheck.refusal(header, bound)
      expect(refused, String(header)).toMatch(reason)
      expect(refused, String(header)).toMatch(
        /: a loopback viewer answers only to localhost, 127\.0\.0\.0\/8 or \[::1\] on port 4319$/,
      )
      expect(refused, String(header)).not.toContain("\n")
    }
  })

  it("parses a header into its lower-case name and port", () => {
    expect(HostCheck.parse("LocalHost:8080")).toEqual({ name: "localhost", port: 8080 })
    expect(HostCheck.parse("[::1]")).toEqual({ name: "[::1]", port: 80 })
    expect(HostCheck.parse("127.0.0.1:65535")).toEqual({ name: "127.0.0.1", port: 65535 })
    expect(HostCheck.parse("127.0.0.1:65536")).toBeUndefined()
    expect(HostCheck.parse("127.0.0.1:0")).toEqual({ name: "127.0.0.1", port: 0 })
  })
})
