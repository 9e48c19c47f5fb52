import { describe, expect, test } from "bun:test";
import { attemptLogin } from "../../src/honeypots/honnypotter/login";
import { handleXmlRpc, parseMethodCall, parseXml } from "../../src/honeypots/honnypotter/xmlrpc";

const SITE = { users: new Set(["admin"]), lostPasswordUrl: "http://blog/wp-login.php?action=lostpassword" };

describe("wp-login.php decisions", () => {
  test("WordPress' wording for each case, and which posts count as attempts", () => {
    const form = (fields: Record<string, string>) => attemptLogin(new Map(Object.entries(fields)), true, SITE);
    expect(form({})).toEqual({ errors: [], username: "", password: "", attempted: false });
    expect(form({ log: "admin@blog", pwd: "x" }).errors).toEqual(["<strong>Error:</strong> Unknown email address. Check again or try your username."]);
    expect(form({ log: " admin ", pwd: "x" })).toMatchObject({ username: "admin", attempted: true, errors: [expect.stringContaining("The password you entered for the username <strong>admin</strong> is incorrect.")] });
    expect(form({ pwd: "only" })).toMatchObject({ attempted: true, errors: ["<strong>Error:</strong> The username field is empty."] });
    expect(form({ log: "", pwd: "" })).toMatchObject({ attempted: false });
    expect(attemptLogin(new Map([["log", "a"], ["pwd", "b"], ["testcookie", "1"]]), false, SITE).errors[0]).toStartWith("<strong>Error:</strong> Cookies are blocked");
  });
});

describe("the XML-RPC reader", () => {
  test("typed and untyped values, structs, arrays, entities and CDATA", () => {
    const xml = `<?xml version="1.0"?><!-- c --><methodCall><methodName> wp.getUsersBlogs </methodName><params>
      <param><value>a&amp;b&#65;&#x42;</value></param>
      <param><value><string><![CDATA[<pw>]]></string></value></param>
      <param><value><struct><member><name>n</name><value><i4>7</i4></value></member></struct></value></param>
      <param><value><array><data><value><boolean>1</boolean></value><value><base64>aGk=</base64></value><value><nil/></value></data></array></value></param>
    </params></methodCall>`;
    expect(parseMethodCall(xml)).toEqual({ method: "wp.getUsersBlogs", params: ["a&bAB", "<pw>", { n: 7 }, [true, "hi", null]] });
  });

  test("refuses what IXR refuses: bad nesting, unknown entities, DOCTYPE, two roots, deep bombs", () => {
    for (const bad of ["<a><b></a></b>", "<a>&nope;</a>", "<a>&</a>", '<!DOCTYPE a><a/>', "<a/><b/>", "text<a/>", "<a>", "<a", `${"<v>".repeat(100)}${"</v>".repeat(100)}`]) {
      expect(parseXml(bad)).toBeNull();
    }
    expect(handleXmlRpc("<methodCall><methodName>x</methodName></methodCall junk").body).toContain("<int>-32700</int>");
  });

  test("credential methods with the username in other places, and system.listMethods", () => {
    const call = (method: string, ...params: string[]) => handleXmlRpc(`<methodCall><methodName>${method}</methodName><params>${params.map((p) => `<param><value>${p}</value></param>`).join("")}</params></methodCall>`);
    expect(call("metaWeblog.getUsersBlogs", "appkey", "bob", "pw").attempts).toEqual([{ method: "metaWeblog.getUsersBlogs", username: "bob", password: "pw" }]);
    expect(call("wp.getProfile", "1", "eve", "pw2").attempts).toEqual([{ method: "wp.getProfile", username: "eve", password: "pw2" }]);
    expect(call("wp.getUsersBlogs").attempts).toEqual([{ method: "wp.getUsersBlogs", username: "", password: "" }]);
    const list = call("system.listMethods");
    expect(list.attempts).toEqual([]);
    expect(list.body).toContain("<value><string>wp.getUsersBlogs</string></value>");
  });
});
