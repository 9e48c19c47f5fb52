import { describe, expect, test } from "bun:test";
import { ConfigError } from "../../src/honeypots/shared/config.ts";
import { MAX_LISTENERS, parseBanners, parseBounded, parsePorts } from "../../src/honeypots/tcp/ports.ts";

describe("ports", () => {
  test("single ports and ranges, named by port; every 0 by its rank among the zeros", () => {
    expect(parsePorts(" 8000-8002, 9200 ,0,23231,0")).toEqual([
      { name: "tcp-8000", key: "8000", port: 8000 },
      { name: "tcp-8001", key: "8001", port: 8001 },
      { name: "tcp-8002", key: "8002", port: 8002 },
      { name: "tcp-9200", key: "9200", port: 9200 },
      { name: "tcp-any-0", key: "any-0", port: 0 },
      { name: "tcp-23231", key: "23231", port: 23231 },
      { name: "tcp-any-1", key: "any-1", port: 0 },
    ]);
    expect(parsePorts(`1-${MAX_LISTENERS}`)).toHaveLength(MAX_LISTENERS);
  });

  test("refused with a message naming the key", () => {
    const refusal = (spec: string) => {
      try {
        parsePorts(spec);
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return (err as Error).message;
      }
      return "accepted";
    };
    expect({
      empty: refusal(" , "),
      big: refusal("65536"),
      word: refusal("http"),
      backwards: refusal("9000-8000"),
      zeroRange: refusal("0-10"),
      twice: refusal("8000,7990-8005"),
      tooMany: refusal(`1-${MAX_LISTENERS},2000`),
      hugeRange: refusal("1-65535"),
    }).toEqual({
      empty: "config key ports: no port given",
      big: 'config key ports: "65536" is not a port 0-65535',
      word: 'config key ports: "http" is not a port 0-65535',
      backwards: 'config key ports: "9000-8000" is not a range of ports from low to high',
      zeroRange: 'config key ports: "0-10" is not a range of ports from low to high',
      twice: "config key ports: port 8000 is listed twice",
      tooMany: `config key ports: more than ${MAX_LISTENERS} ports`,
      hugeRange: `config key ports: more than ${MAX_LISTENERS} ports`,
    });
  });
});

describe("banners", () => {
  const entries = parsePorts("21,2222,0");

  test("a JSON object from a listener's key or * to its bytes, one byte per character", () => {
    const banners = parseBanners(JSON.stringify({ "21": "220 (vsFTPd 3.0.3)\r\n", "any-0": "\u0000\u00ff\u0080", "*": "", "2222": "SSH-2.0-OpenSSH_8.9p1\r\n" }), entries);
    expect(Object.fromEntries([...banners].map(([key, bytes]) => [key, bytes.toString("hex")]))).toEqual({
      "21": Buffer.from("220 (vsFTPd 3.0.3)\r\n").toString("hex"),
      "any-0": "00ff80",
      "2222": Buffer.from("SSH-2.0-OpenSSH_8.9p1\r\n").toString("hex"),
    });
    expect(parseBanners("", entries).size).toBe(0);
  });

  test("refused: not JSON, not an object, a port not listened on, a character above U+00FF, too long", () => {
    const refusal = (spec: string) => {
      try {
        parseBanners(spec, entries);
        return "accepted";
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(refusal("21=220 hello")).toStartWith("config key banners is not JSON");
    expect(refusal('["220"]')).toBe("config key banners must be a JSON object");
    expect(refusal('{"80": "x"}')).toBe('config key banners: "80" is not one of the listened ports');
    expect(refusal('{"21": 220}')).toBe('config key banners: the banner of "21" must be a string');
    expect(refusal('{"21": "\u20ac"}')).toBe('config key banners: the banner of "21" has a character above U+00FF (one character is one byte)');
    expect(refusal(JSON.stringify({ "21": "x".repeat(4097) }))).toBe('config key banners: the banner of "21" is longer than 4096 bytes');
  });
});

test("bounded numbers", () => {
  expect(parseBounded("wait_ms", "0", 0, 600_000)).toBe(0);
  expect(parseBounded("first_bytes", "65536", 1, 65536)).toBe(65536);
  expect(() => parseBounded("first_bytes", "65537", 1, 65536)).toThrow('config key first_bytes must be a whole number from 1 to 65536, got "65537"');
  expect(() => parseBounded("first_bytes", "0", 1, 65536)).toThrow(ConfigError);
});
