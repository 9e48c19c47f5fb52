import { describe, expect, test } from "bun:test";
import type { Socket } from "bun";
import { type ClientHello, isGrease, readClientHello } from "../../src/honeypots/web/clienthello";
import { ja3Hash, ja3Text, ja4, ja4h } from "../../src/honeypots/web/fingerprint";
import { parseHead } from "../../src/honeypots/web/http-parse";
import { run } from "./harness";

/*
 * ClientHellos from the packet captures of FoxIO's JA4 repository (pcap/tls-sni.pcapng stream 0,
 * pcap/tls-non-ascii-alpn.pcapng, pcap/tls12.pcap, pcap/tls-alpn-h2.pcap): the TCP payload of the
 * client's first segment, record header included. The expected JA4 and JA4_r are the ones FoxIO
 * publishes for those captures (python/test/testdata, rust/ja4/src/snapshots).
 */
const CHROME = [
  "1603010200010001fc03030f9e38acb9a54a7c6e00e29a70ac2feee180ff76d7f25dca84932a66a42d1e5a20bc58b92f865e6b9aa4a6371cadcb0afe1da1c0f7",
  "05209a11d52357f56d5dd9620020aaaa130113021303c02bc02fc02cc030cca9cca8c013c014009c009d002f0035010001939a9a0000ff010001000033002b00",
  "290a0a000100001d0020cf55af2603e92f59eb321779706a18fa6b96b16c16404c2264ed687a59401878002d0002010100050005010000000044690005000302",
  "6832000d00120010040308040401050308050501080606010010000e000c02683208687474702f312e3100230000001b0003020002002b0007060a0a03040303",
  "00000022002000001d636c69656e7473657276696365732e676f6f676c65617069732e636f6d00120000000a000a00080a0a001d0017001800170000000b0002",
  "01006a6a000100001500ba0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
  "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
  "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
  "0000000000",
].join("");

const CHROME_NON_ASCII_ALPN = [
  "1603010200010001fc03030f9e38acb9a54a7c6e00e29a70ac2feee180ff76d7f25dca84932a66a42d1e5a20bc58b92f865e6b9aa4a6371cadcb0afe1da1c0f7",
  "05209a11d52357f56d5dd9620020aaaa130113021303c02bc02fc02cc030cca9cca8c013c014009c009d002f0035010001939a9a0000ff010001000033002b00",
  "290a0a000100001d0020cf55af2603e92f59eb321779706a18fa6b96b16c16404c2264ed687a59401878002d0002010100050005010000000044690005000302",
  "6832000d00120010040308040401050308050501080606010010000e000c02baad08687474702f312e3100230000001b0003020002002b0007060a0a03040303",
  "00000022002000001d636c69656e7473657276696365732e676f6f676c65617069732e636f6d00120000000a000a00080a0a001d0017001800170000000b0002",
  "01006a6a000100001500ba0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
  "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
  "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
  "0000000000",
].join("");

const FIREFOX = [
  "1603010200010001fc0303ecb2691addb2bf6c599c7aaae23de5f42561cc04eb41029acc6fc050a16ac1d22046f8617b580ac9358e2aa44e306d52466bcc989c",
  "87c8ca64309f5faf50ba7b4d0022130113031302c02bc02fcca9cca8c02cc030c00ac009c013c014009c009d002f00350100019100000021001f00001c636f6e",
  "74696c652e73657276696365732e6d6f7a696c6c612e636f6d00170000ff01000100000a000e000c001d00170018001901000101000b00020100002300000010",
  "000e000c02683208687474702f312e310005000501000000000022000a000804030503060302030033006b0069001d00208909858fbeb6ed2f1248ba5b9e2978",
  "bead0e840110192c61daed0096798b184400170041044d183d91f5eed35791fa982464e3b0214aaa5f5d1b78616d9b9fbebc22d11f535b2f94c686143136aa79",
  "5e6e5a875d6c08064ad5b76d44caad766e2483012748002b00050403040303000d0018001604030503060308040805080604010501060102030201002d000201",
  "01001c000240010015007a0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
  "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
  "0000000000",
].join("");

const TLS12_CLIENT = [
  "16030100e8010000e40303858226c04fbaeddef4246093b4cfdab38f9dcfef145360e417686575cac49c7000005cc030c02cc028c024c014c00a009f006b0039",
  "cca9cca8ccaaff8500c400880081009d003d003500c00084c02fc02bc027c023c013c009009e0067003300be0045009c003c002f00ba0041c011c00700050004",
  "c012c0080016000a00ff0100005f0000001700150000127777772e636c6f7564666c6172652e636f6d000b00020100000a00080006001d00170018000d001c00",
  "1a06010603efef0501050304010403eeeeeded03010303020102030010000e000c02683208687474702f312e31",
].join("");

const hello = (hex: string): ClientHello => {
  const r = readClientHello(Buffer.from(hex, "hex"));
  if (r.kind !== "hello") throw new Error(`not a hello: ${JSON.stringify(r)}`);
  return r.hello;
};

describe("JA4 on FoxIO's published captures", () => {
  test.each([
    [
      "Chrome (the specification's example)",
      CHROME,
      "t13d1516h2_8daaf6152771_e5627efa2ab1",
      "t13d1516h2_002f,0035,009c,009d,1301,1302,1303,c013,c014,c02b,c02c,c02f,c030,cca8,cca9_0005,000a,000b,000d,0012,0015,0017,001b,0023,002b,002d,0033,4469,ff01_0403,0804,0401,0503,0805,0501,0806,0601",
    ],
    [
      "Firefox",
      FIREFOX,
      "t13d1715h2_5b57614c22b0_3d5424432f57",
      "t13d1715h2_002f,0035,009c,009d,1301,1302,1303,c009,c00a,c013,c014,c02b,c02c,c02f,c030,cca8,cca9_0005,000a,000b,000d,0015,0017,001c,0022,0023,002b,002d,0033,ff01_0403,0503,0603,0804,0805,0806,0401,0501,0601,0203,0201",
    ],
    [
      "a TLS 1.2 client without supported_versions",
      TLS12_CLIENT,
      "t12d4605h2_85626a9a5f7f_aaf95bb78ec9",
      "t12d4605h2_0004,0005,000a,0016,002f,0033,0035,0039,003c,003d,0041,0045,0067,006b,0081,0084,0088,009c,009d,009e,009f,00ba,00be,00c0,00c4,00ff,c007,c008,c009,c00a,c011,c012,c013,c014,c023,c024,c027,c028,c02b,c02c,c02f,c030,cca8,cca9,ccaa,ff85_000a,000b,000d_0601,0603,efef,0501,0503,0401,0403,eeee,eded,0301,0303,0201,0203",
    ],
  ])("%s", (_name, hex, expected, raw) => {
    expect(ja4(hello(hex))).toEqual({ ja4: expected, ja4_r: raw });
  });

  test("a first ALPN value that is not alphanumeric is shown by its hex digits, as the specification now says", () => {
    // FoxIO's capture offers 0xBA 0xAD first: hex "baad", first and last digit "bd". The
    // snapshots in FoxIO's repository still print "99", the rule before the specification changed.
    const h = hello(CHROME_NON_ASCII_ALPN);
    expect(Buffer.from(h.alpn[0]!).toString("hex")).toBe("baad");
    expect(ja4(h).ja4).toBe("t13d1516bd_8daaf6152771_e5627efa2ab1");
    const withAlpn = (...bytes: number[]) => ja4({ ...h, alpn: [Uint8Array.from(bytes)] }).ja4.slice(8, 10);
    // The specification's own examples.
    expect([withAlpn(0xab), withAlpn(0x20), withAlpn(0xab, 0xcd), withAlpn(0x20, 0x61), withAlpn(0x30, 0xab), withAlpn(0x61, 0x20), withAlpn(0x30, 0x31, 0xab, 0xcd), withAlpn(0x30, 0xab, 0xcd, 0x31)]).toEqual(["ab", "20", "ad", "21", "3b", "60", "3d", "01"]);
    expect([withAlpn(0x68, 0x32), withAlpn(0x61), withAlpn()]).toEqual(["h2", "aa", "00"]);
    expect(ja4({ ...h, alpn: [] }).ja4.slice(8, 10)).toBe("00");
  });

  test("no SNI is an i, and empty lists hash to twelve zeros", () => {
    const h = hello(CHROME);
    expect(ja4({ ...h, extensions: h.extensions.filter((e) => e !== 0), sni: null }).ja4).toStartWith("t13i1515h2_");
    expect(ja4({ ...h, ciphers: [], extensions: [], alpn: [], signatureAlgorithms: [], supportedVersions: [] }).ja4).toBe("t12i000000_000000000000_000000000000");
  });
});

describe("the ClientHello parser", () => {
  test("reads the fields JA3 and JA4 are made of, GREASE left in for the fingerprints to drop", () => {
    const h = hello(CHROME);
    expect(h.sni).toBe("clientservices.googleapis.com");
    expect(h.alpn.map((a) => Buffer.from(a).toString())).toEqual(["h2", "http/1.1"]);
    expect(h.version).toBe(0x0303);
    expect(h.groups).toEqual([0x0a0a, 0x1d, 0x17, 0x18]);
    expect(h.pointFormats).toEqual([0]);
    expect(h.supportedVersions.filter((v) => !isGrease(v))).toEqual([0x0304, 0x0303]);
    expect(h.ciphers.filter(isGrease)).toHaveLength(1);
  });

  test("a hello cut anywhere is 'more', never an error or a throw; a hello split over two records is read whole", () => {
    const bytes = Buffer.from(FIREFOX, "hex");
    for (let n = 0; n < bytes.length; n++) expect(readClientHello(bytes.subarray(0, n)).kind).toBe("more");
    // The same handshake message in two records of its own (RFC 8446 5.1 allows any split).
    const message = bytes.subarray(5);
    const record = (part: Buffer) => Buffer.concat([Buffer.from([0x16, 0x03, 0x01, part.length >> 8, part.length & 0xff]), part]);
    const split = Buffer.concat([record(message.subarray(0, 100)), record(message.subarray(100))]);
    expect(ja4((readClientHello(split) as { hello: ClientHello }).hello).ja4).toBe("t13d1715h2_5b57614c22b0_3d5424432f57");
  });

  test("lies in length fields and random bytes are errors, not crashes", () => {
    const bytes = Buffer.from(CHROME, "hex");
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 2000; i++) {
      const mutated = Buffer.from(bytes);
      for (let k = 0; k < 4; k++) mutated[5 + Math.floor(random() * (mutated.length - 5))] = Math.floor(random() * 256);
      expect(["hello", "error", "more"]).toContain(readClientHello(mutated).kind);
    }
    expect(readClientHello(Buffer.from("GET / HTTP/1.1\r\n\r\n"))).toEqual({ kind: "error", reason: "not a TLS handshake record" });
    expect(readClientHello(Buffer.from([0x16, 3, 1, 0, 4, 2, 0, 0, 0]))).toEqual({ kind: "error", reason: "first handshake message is not a ClientHello" });
    expect(readClientHello(Buffer.from([0x16, 3, 1, 0, 4, 1, 0xff, 0xff, 0xff])).kind).toBe("error");
  });
});

describe("JA3", () => {
  test("Salesforce's published examples", () => {
    const base = { recordVersion: 0x0301, supportedVersions: [], signatureAlgorithms: [], alpn: [], sni: null };
    const a = { ...base, version: 769, ciphers: [47, 53, 5, 10, 49161, 49162, 49171, 49172, 50, 56, 19, 4], extensions: [0, 10, 11], groups: [23, 24, 25], pointFormats: [0] };
    expect(ja3Text(a)).toBe("769,47-53-5-10-49161-49162-49171-49172-50-56-19-4,0-10-11,23-24-25,0");
    expect(ja3Hash(ja3Text(a))).toBe("ada70206e40642a3e4461f35503241d5");
    const b = { ...base, version: 769, ciphers: [4, 5, 10, 9, 100, 98, 3, 6, 19, 18, 99], extensions: [], groups: [], pointFormats: [] };
    expect(ja3Text(b)).toBe("769,4-5-10-9-100-98-3-6-19-18-99,,,");
    expect(ja3Hash(ja3Text(b))).toBe("de350869b8c85de67a350c8d186f11e6");
  });

  test("on the Chrome capture: the order on the wire, GREASE left out", () => {
    // Ciphers and extensions in the order of FoxIO's JA4_ro for this capture, in decimal;
    // groups 0x0a0a (GREASE), 0x001d, 0x0017, 0x0018 as the hex shows them.
    expect(ja3Text(hello(CHROME))).toBe(
      "771,4865-4866-4867-49195-49199-49196-49200-52393-52392-49171-49172-156-157-47-53,65281-51-45-5-17513-13-16-35-27-43-0-18-10-23-11-21,29-23-24,0",
    );
  });
});

describe("JA4H on FoxIO's published captures", () => {
  test.each([
    [
      "curl with cookies, a referer and Accept-Language (pcap/http1-with-cookies.pcapng)",
      "GET / HTTP/1.1\r\nHost: localhost:8000\r\nUser-Agent: curl/8.1.2\r\nAccept: */*\r\nReferer: https://fake.example\r\nCookie: yummy_cookie=choco; tasty_cookie=strawberry\r\nAccept-Language: da, en-GB;q=0.8, en;q=0.7\r\n\r\n",
      "ge11cr04da00_8ddaef5d77af_280f366eaa04_c2fb0fe53442",
    ],
    [
      "a UniFi device's inform POST (pcap/http1.pcapng)",
      "POST /inform HTTP/1.1\r\nHost: unifi:8080\r\nAccept: */*\r\nUser-Agent: AirControl Agent v1.0\r\nContent-Type: application/x-binary\r\nContent-Length: 6419\r\n\r\n",
      "po11nn050000_530ceba2075f_000000000000_000000000000",
    ],
    ["HTTP/1.0 with bare LF and an empty User-Agent (pcap/http-empty-useragent.pcap)", "GET / HTTP/1.0\nUser-Agent:\n\n", "ge10nn010000_b8bcd45ac095_000000000000_000000000000"],
  ])("%s", (_name, request, expected) => {
    const parsed = parseHead(Buffer.from(request, "latin1"));
    if (parsed.kind !== "head") throw new Error(JSON.stringify(parsed));
    expect(ja4h(parsed.head)).toBe(expected);
  });
});

describe("live ClientHellos", () => {
  /** The first bytes a client sends to a raw listener (the handshake then fails: only the hello matters). */
  async function capture(client: (port: number) => string[]): Promise<ClientHello> {
    const { promise, resolve } = Promise.withResolvers<ClientHello>();
    let bytes = Buffer.alloc(0);
    using listener = Bun.listen<undefined>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        data(socket: Socket<undefined>, chunk) {
          bytes = Buffer.concat([bytes, chunk]);
          const r = readClientHello(bytes);
          if (r.kind === "more") return;
          socket.end();
          if (r.kind === "hello") resolve(r.hello);
        },
      },
    });
    const [got] = await Promise.all([promise, run(client(listener.port))]);
    return got;
  }

  test("openssl s_client: the SNI and ALPN it was given, TLS 1.3 offered", async () => {
    const h = await capture((port) => ["openssl", "s_client", "-connect", `127.0.0.1:${port}`, "-servername", "shop.example.org", "-alpn", "h2,http/1.1"]);
    expect(h.sni).toBe("shop.example.org");
    expect(h.alpn.map((a) => Buffer.from(a).toString())).toEqual(["h2", "http/1.1"]);
    expect(ja4(h).ja4).toMatch(/^t13d\d{4}h2_[0-9a-f]{12}_[0-9a-f]{12}$/);
  });

  test("curl: the same fingerprints on two runs", async () => {
    const curl = (port: number) => ["curl", "-sk", "--max-time", "5", `https://localhost:${port}/`];
    const [a, b] = [await capture(curl), await capture(curl)];
    expect(a.sni).toBe("localhost");
    expect(ja4(a)).toEqual(ja4(b));
    expect(ja3Hash(ja3Text(a))).toBe(ja3Hash(ja3Text(b)));
  });
});
