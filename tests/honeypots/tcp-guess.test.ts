import { describe, expect, test } from "bun:test";
import { guessProtocol, PROTOCOLS } from "../../src/honeypots/tcp/guess.ts";

/**
 * First bytes as real clients sent them to a silent port (hex): Debian's clients, nmap 7.93's
 * service probes (named as in nmap-service-probes) and its scripts against their usual ports.
 */
const FIRST_BYTES: Record<string, string> = {
  "openssl s_client -servername example.org": "1603010138010001340303e2828a08b55df9efb70db8bc53b2b0b7c7e974012310d84f4b62c9e3ef289a2820f9029317fe17021a75c384714bc546dbab32b6ea76840b56854386089a291074003e130213031301c02cc030009fcca9cca8ccaac02bc02f009ec024c028006bc023c0270067c00ac0140039c009c0130033009d009c003d003c0035002f00ff010000ad00000010000e00000b6578616d706c652e6f7267000b000403000102000a00160014001d0017001e0019001801000101010201030104002300000016000000170000000d002a0028040305030603080708080809080a080b080408050806040105010601030303010302040205020602002b0009080304030303020301002d00020101003300260024001d0020fc4a9efae9ac8c4dbe51d7623046250864b17aae576c770a9eab246fd1077338",
  "ssh (OpenSSH 9.2)": "5353482d322e302d4f70656e5353485f392e3270312044656269616e2d322b646562313275360d0a",
  "curl http://127.0.0.1:47001/x": "474554202f7820485454502f312e310d0a486f73743a203132372e302e302e313a34373030310d0a557365722d4167656e743a206375726c2f372e38382e310d0a4163636570743a202a2f2a0d0a0d0a",
  "redis-cli PING": "2a310d0a24340d0a50494e470d0a",
  "psql sslmode=disable": "0000003f000300007573657200706f73746772657300646174616261736500706f737467726573006170706c69636174696f6e5f6e616d65007073716c0000",
  "psql sslmode=require": "0000000804d2162f",
  "mosquitto_pub -i honeybee-test": "101900044d5154540402003c000d686f6e65796265652d74657374",
  "mosquitto_pub -V mqttv5 -u admin -P secret": "101f00044d51545405c2003c032100140000000561646d696e0006736563726574",
  "nc: hello": "68656c6c6f0d0a",
  "curl --http2-prior-knowledge": "505249202a20485454502f322e300d0a0d0a534d0d0a0d0a00001204000000000000030000006400040200000000020000000000000408000000000001ff000100001f010500000001828486418b089d5c0b8170dc69d0019f7a8825b650c3abbcf2e153032a2f2a",
  "curl -x socks5://": "05020001",
  "curl -x socks4://": "040100505db8d70e00",
  "curl -x socks4a://": "0401005000000001006578616d706c652e6f726700",
  "curl -p -x http:// (CONNECT)": "434f4e4e454354206578616d706c652e6f72673a34343320485454502f312e310d0a486f73743a206578616d706c652e6f72673a3434330d0a557365722d4167656e743a206375726c2f372e38382e310d0a50726f78792d436f6e6e656374696f6e3a204b6565702d416c6976650d0a0d0a",
  "curl ldap://": "300c020101600702010304008000",
  "curl rtsp://": "4f5054494f4e53202a20525453502f312e300d0a435365713a20310d0a557365722d4167656e743a206375726c2f372e38382e310d0a0d0a",
  "curl mqtt://": "101800044d5154540402003c000c6375726c3839386564363164",
  "nc: JSON-RPC eth_blockNumber": "7b226a736f6e727063223a22322e30222c226d6574686f64223a226574685f626c6f636b4e756d626572222c22706172616d73223a5b5d2c226964223a317d0a",
  "nc: Stratum mining.subscribe": "7b226964223a312c226d6574686f64223a226d696e696e672e737562736372696265222c22706172616d73223a5b226370756d696e65722f322e352e31225d7d0a",
  "curl --haproxy-protocol": "50524f58592054435034203132372e302e302e31203132372e302e302e312035303130362034373031300d0a474554202f20485454502f312e310d0a486f73743a203132372e302e302e313a34373031300d0a557365722d4167656e743a206375726c2f372e38382e310d0a4163636570743a202a2f2a0d0a0d0a",
  "curl imap:// (after the greeting)": "41303031204341504142494c4954590d0a",
  "curl smtp:// (after the greeting)": "45484c4f206e756c6c0d0a",
  "nmap vnc-info (after the banner)": "524642203030332e3030380a",
  "nmap smb-protocols, port 139": "8100004420434b4644454e45434644454646434647454646434341434143414341434143410020454f454e4542464143414341434143414341434143414341434143414341434100",
  "nmap xmpp-info": "3c3f786d6c2076657273696f6e3d27312e30273f3e3c73747265616d3a73747265616d20786d6c6e733a73747265616d3d27687474703a2f2f6574686572782e6a61626265722e6f72672f73747265616d732720786d6c6e733d276a61626265723a636c69656e742720786d6c3a6c616e673d2772752d52552720746f3d276c6f63616c686f7374272076657273696f6e3d27312e30273e",
  "nmap bitcoin-info": "f9beb4d976657273696f6e000000000055000000be5049cb409c0000010000000000000003260a6b0000000001000000000000007f000001000000000000000000000000208d01000000000000007f00000100000000000000000000000093cadcebb585bbf685a70000000000",
  "nmap smb-protocols (SMB1)": "00000031ff534d4272000000001845680000000000000000000000000000702b00000100000e00024e54204c4d20302e3132000200",
  "nmap smb-protocols (SMB2)": "000000b4fe534d424000000000000000000000000000000000000000000000000000000000000000000000000000000000000000313233343536373839303132333435362400050001000000000000003132333435363738393031323334353670000000020000000202100200030203110300000200060000000000020002000100000001002c00000000000200020001000100200001000000000000000000000000000000000001000000000000000000000000000000",
  "nmap rdp-enum-encryption": "0300002a25e00000000000436f6f6b69653a206d737473686173683d6e6d61700d0a0100080008000000",
  "nmap modbus-discover": "0000000000020111",
  "nmap s7-info": "0300001611e00000001400c1020100c2020102c0010a",
  "nmap TLSSessionReq": "1603000069010000650303551ca7e472616e646f6d3172616e646f6d3272616e646f6d3372616e646f6d3400000c002f000a00130039000400ff01000030000d002c002a000100030002060106030602020102030202030103030302040104030402010101030102050105030502",
  "nmap SSLv23SessionReq": "809e01030100750000002000006600006500006400006300006200003a00003900003800003500003400003300003200002f00001b00001a00001900001800001700001600001500001400001300001200001100000a0000090000080000060000050000040000030700c0060040040080030080020080010080000002000001e4693c2bf6d69bbbd3819fbf15c140a56f142c4d20c4c7e0b6b0b21ff929e898",
  "nmap TerminalServer": "0300000b06e00000000000",
  "nmap TerminalServerCookie": "0300002a25e00000000000436f6f6b69653a206d737473686173683d6e6d61700d0a0100080003000000",
  "nmap SMBProgNeg": "000000a4ff534d4272000000000801400000000000000000000000000000400600000100008100025043204e4554574f524b2050524f4752414d20312e3000024d4943524f534f4654204e4554574f524b5320312e303300024d4943524f534f4654204e4554574f524b5320332e3000024c414e4d414e312e3000024c4d312e3258303032000253616d626100024e54204c414e4d414e20312e3000024e54204c4d20302e313200",
  "nmap SIPOptions": "4f5054494f4e53207369703a6e6d205349502f322e300d0a5669613a205349502f322e302f544350206e6d3b6272616e63683d666f6f0d0a46726f6d3a203c7369703a6e6d406e6d3e3b7461673d726f6f740d0a546f3a203c7369703a6e6d32406e6d323e0d0a43616c6c2d49443a2035303030300d0a435365713a203432204f5054494f4e530d0a4d61782d466f7277617264733a2037300d0a436f6e74656e742d4c656e6774683a20300d0a436f6e746163743a203c7369703a6e6d406e6d3e0d0a4163636570743a206170706c69636174696f6e2f7364700d0a0d0a",
  "nmap DNSVersionBindReqTCP": "001e0006010000010000000000000776657273696f6e0462696e640000100003",
  "nmap DNSStatusRequestTCP": "000c000010000000000000000000",
  "nmap X11Probe": "6c000b000000000000000000",
  "nmap JavaRMI": "4a524d4900024b",
  "nmap mongodb": "410000003a300000ffffffffd407000000000000746573742e24636d640000000000ffffffff1b0000000173657276657253746174757300000000000000f03f00",
  "nmap Kerberos": "000000716a816e30816ba103020105a20302010aa4815e305ca00703050050800010a2041b024e4da3173015a003020100a10e300c1b066b72627467741b024e4da511180f31393730303130313030303030305aa70602041f1eb9d9a8173015020112020111020110020117020101020103020102",
  "nmap oracle-tns": "005a0000010000000136012c000008007fff7f08000000010020003a0000000000000000000000000000000034e600000001000000000000000028434f4e4e4543545f444154413d28434f4d4d414e443d76657273696f6e2929",
  "nmap RPCCheck": "8000002872fe1d130000000000000002000186a00001977c0000000000000000000000000000000000000000",
  "nmap OpenVPN": "000e3837a52608a21ba0b10000000000",
  "nmap tn3270": "fffb18fffa180049424d2d333237392d342d45fff0fffb19fffd19fffb00fffd00",
  "nmap ms-sql-s": "1201003400000000000015000601001b000102001c000c0300280004ff080001550000004d5353514c53657276657200480f0000",
  "nmap ajp": "123400010a",
  "nmap adbConnect": "434e584e00000001001000000700000032020000bcb1a7b1686f73743a3a00",
  "nmap Memcache": "73746174730d0a",
  "nmap redis-server": "2a310d0a24340d0a696e666f0d0a",
  "nmap Hello": "45484c4f0d0a",
  "nmap Socks4": "040100167f000001726f6f7400",
  "nmap Socks5": "050400010280050100030a676f6f676c652e636f6d0050474554202f20485454502f312e300d0a0d0a",
  "nmap LDAPSearchReq": "30840000002d02010763840000002404000a01000a0100020100020164010100870b6f626a656374436c617373308400000000",
  "nmap GenericLines": "0d0a0d0a",
  "nmap Help": "48454c500d0a",
  "nmap LSCP": "4745542053455256455220494e464f0d0a",
  "nmap gkrellm": "676b72656c6c6d20302e302e30",
  "nmap metasploit-xmlrpc": "3c3f786d6c2076657273696f6e3d22312e3022203f3e3c6d6574686f6443616c6c3e3c6d6574686f644e616d653e6e6d61702e70726f62653c2f6d6574686f644e616d653e3c2f6d6574686f6443616c6c3e0a00",
  "nmap Radmin": "01000000010000000808",
  "nmap pervasive-relational": "436c69656e7420737472696e6720666f7220504152432076657273696f6e2031205769726520456e6372797074696f6e2076657273696f6e20310000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
  "nmap NessusTPv10": "3c204e54502f312e30203e0a",
  "nmap giop": "47494f500100010024000000000000000100000001000000060000006162636465660000040000006765740000000000",
};

const guess = (hex: string): Record<string, unknown> => {
  const { protocol, fields } = guessProtocol(Buffer.from(hex, "hex"));
  return { protocol, ...fields };
};

const OPENSSL_JA4_R =
  "t13d311000_002f,0033,0035,0039,003c,003d,0067,006b,009c,009d,009e,009f,00ff,1301,1302,1303,c009,c00a,c013,c014,c023,c024,c027,c028,c02b,c02c,c02f,c030,cca8,cca9,ccaa_000a,000b,000d,0016,0017,0023,002b,002d,0033_0403,0503,0603,0807,0808,0809,080a,080b,0804,0805,0806,0401,0501,0601,0303,0301,0302,0402,0502,0602";

describe("guessProtocol on real first bytes", () => {
  test("every client and probe is named, with what its first message says", () => {
    const guesses = Object.fromEntries(Object.entries(FIRST_BYTES).map(([name, hex]) => [name, guess(hex)]));
    expect(guesses).toEqual({
      "openssl s_client -servername example.org": {
        protocol: "tls",
        tls_version: "TLSv1.3",
        sni: "example.org",
        alpn: [],
        ja3: "771,4866-4867-4865-49196-49200-159-52393-52392-52394-49195-49199-158-49188-49192-107-49187-49191-103-49162-49172-57-49161-49171-51-157-156-61-60-53-47-255,0-11-10-35-22-23-13-43-45-51,29-23-30-25-24-256-257-258-259-260,0-1-2",
        ja3_hash: "a3afc2c46ba4a7d7fbe1cfb7a3031c2f",
        ja4: "t13d311000_e8f1e7e78f70_1f22a2ca17c4",
        ja4_r: OPENSSL_JA4_R,
      },
      "ssh (OpenSSH 9.2)": { protocol: "ssh", ssh_version: "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u6" },
      "curl http://127.0.0.1:47001/x": { protocol: "http", http_method: "GET", http_path: "/x", http_version: "1.1", http_host: "127.0.0.1:47001", http_user_agent: "curl/7.88.1" },
      "redis-cli PING": { protocol: "redis", redis_command: "PING" },
      "psql sslmode=disable": { protocol: "postgresql", pg_request: "startup", pg_user: "postgres", pg_database: "postgres", pg_application: "psql" },
      "psql sslmode=require": { protocol: "postgresql", pg_request: "ssl" },
      "mosquitto_pub -i honeybee-test": { protocol: "mqtt", mqtt_version: "3.1.1", mqtt_client_id: "honeybee-test", mqtt_username: null, mqtt_password: null },
      "mosquitto_pub -V mqttv5 -u admin -P secret": { protocol: "mqtt", mqtt_version: "5.0", mqtt_client_id: "", mqtt_username: "admin", mqtt_password: "secret" },
      "nc: hello": { protocol: "unknown" },
      "curl --http2-prior-knowledge": { protocol: "http2" },
      "curl -x socks5://": { protocol: "socks", socks_version: 5, socks_command: null, socks_target: null },
      "curl -x socks4://": { protocol: "socks", socks_version: 4, socks_command: "connect", socks_target: "93.184.215.14:80", socks_user: "" },
      "curl -x socks4a://": { protocol: "socks", socks_version: 4, socks_command: "connect", socks_target: "example.org:80", socks_user: "" },
      "curl -p -x http:// (CONNECT)": { protocol: "http", http_method: "CONNECT", http_path: "example.org:443", http_version: "1.1", http_host: "example.org:443", http_user_agent: "curl/7.88.1" },
      "curl ldap://": { protocol: "ldap", ldap_operation: "bind" },
      "curl rtsp://": { protocol: "rtsp", rtsp_method: "OPTIONS", rtsp_uri: "*", rtsp_user_agent: "curl/7.88.1" },
      "curl mqtt://": { protocol: "mqtt", mqtt_version: "3.1.1", mqtt_client_id: "curl898ed61d", mqtt_username: null, mqtt_password: null },
      "nc: JSON-RPC eth_blockNumber": { protocol: "json-rpc", rpc_method: "eth_blockNumber" },
      "nc: Stratum mining.subscribe": { protocol: "json-rpc", rpc_method: "mining.subscribe" },
      "curl --haproxy-protocol": { protocol: "proxy-protocol", proxy_version: 1 },
      "curl imap:// (after the greeting)": { protocol: "imap", imap_command: "CAPABILITY" },
      "curl smtp:// (after the greeting)": { protocol: "smtp", smtp_helo: "null" },
      "nmap vnc-info (after the banner)": { protocol: "vnc", vnc_version: "003.008" },
      "nmap smb-protocols, port 139": { protocol: "netbios-ssn" },
      "nmap xmpp-info": { protocol: "xmpp", xmpp_to: "localhost" },
      "nmap bitcoin-info": { protocol: "bitcoin", bitcoin_command: "version" },
      "nmap smb-protocols (SMB1)": { protocol: "smb", smb_version: 1, smb_dialects: ["NT LM 0.12", ""] },
      "nmap smb-protocols (SMB2)": { protocol: "smb", smb_version: 2, smb_dialects: ["2.0.2", "2.1", "3.0", "3.0.2", "3.1.1"] },
      "nmap rdp-enum-encryption": { protocol: "rdp", rdp_cookie: "mstshash=nmap", rdp_protocols: ["hybrid_ex"] },
      "nmap modbus-discover": { protocol: "modbus", modbus_unit: 1, modbus_function: 17 },
      "nmap s7-info": { protocol: "iso-tsap" },
      "nmap TLSSessionReq": {
        protocol: "tls",
        tls_version: "TLSv1.2",
        sni: null,
        alpn: [],
        ja3: "771,47-10-19-57-4-255,13,,",
        ja3_hash: "16ee84a07b55074cb2751329bf1c8811",
        ja4: "t12i060100_eca7c5d91837_338aad02a631",
        ja4_r: "t12i060100_0004,000a,0013,002f,0039,00ff_000d_0001,0003,0002,0601,0603,0602,0201,0203,0202,0301,0303,0302,0401,0403,0402,0101,0103,0102,0501,0503,0502",
      },
      "nmap SSLv23SessionReq": { protocol: "tls", tls_version: "TLSv1", sslv2_hello: true },
      "nmap TerminalServer": { protocol: "rdp", rdp_cookie: null, rdp_protocols: ["rdp"] },
      "nmap TerminalServerCookie": { protocol: "rdp", rdp_cookie: "mstshash=nmap", rdp_protocols: ["ssl", "hybrid"] },
      "nmap SMBProgNeg": {
        protocol: "smb",
        smb_version: 1,
        smb_dialects: ["PC NETWORK PROGRAM 1.0", "MICROSOFT NETWORKS 1.03", "MICROSOFT NETWORKS 3.0", "LANMAN1.0", "LM1.2X002", "Samba", "NT LANMAN 1.0", "NT LM 0.12"],
      },
      "nmap SIPOptions": { protocol: "sip", sip_method: "OPTIONS", sip_uri: "sip:nm", sip_user_agent: null },
      "nmap DNSVersionBindReqTCP": { protocol: "dns", dns_opcode: "query", dns_qname: "version.bind", dns_qtype: "TXT", dns_qclass: "CH" },
      "nmap DNSStatusRequestTCP": { protocol: "dns", dns_opcode: "status", dns_qname: null, dns_qtype: null, dns_qclass: null },
      "nmap X11Probe": { protocol: "x11" },
      "nmap JavaRMI": { protocol: "java-rmi" },
      "nmap mongodb": { protocol: "mongodb", mongodb_op: "query", mongodb_collection: "test.$cmd", mongodb_command: "serverStatus" },
      "nmap Kerberos": { protocol: "kerberos", kerberos_message: "as-req" },
      "nmap oracle-tns": { protocol: "oracle-tns", tns_connect_data: "(CONNECT_DATA=(COMMAND=version))" },
      "nmap RPCCheck": { protocol: "sunrpc", rpc_program: 100000, rpc_program_name: "portmapper" },
      "nmap OpenVPN": { protocol: "openvpn" },
      "nmap tn3270": { protocol: "telnet" },
      "nmap ms-sql-s": { protocol: "mssql", mssql_packet: "prelogin" },
      "nmap ajp": { protocol: "ajp", ajp_type: "cping" },
      "nmap adbConnect": { protocol: "adb", adb_banner: "host::\\x00" },
      "nmap Memcache": { protocol: "memcached", memcached_command: "stats" },
      "nmap redis-server": { protocol: "redis", redis_command: "INFO" },
      "nmap Hello": { protocol: "smtp", smtp_helo: "" },
      "nmap Socks4": { protocol: "socks", socks_version: 4, socks_command: "connect", socks_target: "127.0.0.1:22", socks_user: "root" },
      "nmap Socks5": { protocol: "socks", socks_version: 5, socks_command: "connect", socks_target: "google.com:80" },
      "nmap LDAPSearchReq": { protocol: "ldap", ldap_operation: "search" },
      // Probes of protocols without a signature, some of them close to one: none is taken for another.
      "nmap GenericLines": { protocol: "unknown" },
      "nmap Help": { protocol: "unknown" },
      "nmap LSCP": { protocol: "unknown" },
      "nmap gkrellm": { protocol: "unknown" },
      "nmap metasploit-xmlrpc": { protocol: "unknown" },
      "nmap Radmin": { protocol: "unknown" },
      "nmap pervasive-relational": { protocol: "unknown" },
      "nmap NessusTPv10": { protocol: "unknown" },
      "nmap giop": { protocol: "unknown" },
    });
  });

  test("AMQP's protocol header, the fixed 8 bytes every 0-9-1 and 1.0 client opens with", () => {
    expect(guess(Buffer.from("AMQP\x00\x00\x09\x01", "latin1").toString("hex"))).toEqual({ protocol: "amqp", amqp_version: "0.9.1" });
    expect(guess(Buffer.from("AMQP\x03\x01\x00\x00", "latin1").toString("hex"))).toEqual({ protocol: "amqp", amqp_version: "1.0.0" });
  });
});

describe("guessProtocol on cut and hostile bytes", () => {
  test("a capture cut inside the first message still names it, without the fields it did not reach", () => {
    const hello = FIRST_BYTES["openssl s_client -servername example.org"]!;
    expect(guess(hello.slice(0, 200))).toEqual({ protocol: "tls", tls_version: null, sni: null, alpn: [], ja3: null, ja3_hash: null, ja4: null, ja4_r: null });
    expect(guess(Buffer.from("GET /cgi-bin/luci/;stok=/locale?form=country&operation=write&country=$(id", "latin1").toString("hex"))).toEqual({
      protocol: "http",
      http_method: "GET",
      http_path: "/cgi-bin/luci/;stok=/locale?form=country&operation=write&country=$(id",
      http_version: null,
      http_host: null,
      http_user_agent: null,
    });
    expect(guess(FIRST_BYTES["mosquitto_pub -V mqttv5 -u admin -P secret"]!.slice(0, 40))).toEqual({ protocol: "mqtt", mqtt_version: "5.0", mqtt_client_id: "", mqtt_username: null, mqtt_password: null });
  });

  test("every prefix of every capture gives a known name, and what it copies stays printable and short", () => {
    for (const hex of Object.values(FIRST_BYTES)) {
      const bytes = Buffer.from(hex, "hex");
      for (let n = 0; n <= bytes.length; n++) {
        const { protocol, fields } = guessProtocol(bytes.subarray(0, n));
        expect(PROTOCOLS).toContain(protocol);
        for (const value of Object.values(fields).flat()) {
          if (typeof value === "string") expect(value).toMatch(/^[ -~]{0,2048}$/);
        }
      }
    }
  });

  test("bytes copied into fields are escaped and clipped: control characters, a 4 KB version string", () => {
    const evil = `SSH-2.0-${"A".repeat(4000)}\x1b[2J\r\n`;
    expect(guess(Buffer.from(evil, "latin1").toString("hex"))).toEqual({ protocol: "ssh", ssh_version: `SSH-2.0-${"A".repeat(247)}` });
    const request = "GET /\x1b[31m\\ HTTP/1.1\r\nHost: a\x00b\r\n\r\n";
    expect(guess(Buffer.from(request, "latin1").toString("hex"))).toMatchObject({ protocol: "http", http_path: "/\\x1b[31m\\x5c", http_host: "a\\x00b" });
    expect(guess(Buffer.from("*1\r\n$5\r\nin\x1bfo\r\n", "latin1").toString("hex"))).toEqual({ protocol: "redis", redis_command: "IN\\x1bFO" });
  });

  test("noise: random bytes of any length are read in bounded time and never throw", () => {
    let seed = 12345;
    const random = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return seed & 0xff;
    };
    for (let i = 0; i < 2000; i++) {
      const bytes = Buffer.from(Array.from({ length: 1 + (i % 97) * 7 }, random));
      expect(PROTOCOLS).toContain(guessProtocol(bytes).protocol);
    }
    const big = Buffer.from(Array.from({ length: 65536 }, random));
    // Every signature starts at once; the slow path would be a regex over all of it.
    for (const first of [0x16, 0x30, 0x00, 0x05, 0x7b, 0x47]) {
      big[0] = first;
      expect(PROTOCOLS).toContain(guessProtocol(big).protocol);
    }
  });
});
