import { describe, expect, test } from "bun:test";
import { allowedGitUrl } from "../../src/node/git-allow";

const allowed = (url: string, ...allow: string[]) => allowedGitUrl(url, "", allow);

describe("git_allow compares normalised locations", () => {
  test("a `..` or an escaped `..` cannot leave the allowed folder", () => {
    for (const url of [
      "file:///srv/allowed/../evil.git",
      "file:///srv/allowed/%2e%2e/evil.git",
      "file:///srv/allowed/%2E%2e/evil.git",
      "file:///srv/allowed/sub/../../evil.git",
      "file:///srv/allowed/%252e%252e/evil.git",
      "file:///srv/allowed\\..\\evil.git",
    ]) {
      expect([url, allowed(url, "file:///srv/allowed")]).toEqual([url, null]);
    }
    expect(allowed("/srv/allowed/../evil.git", "/srv/allowed")).toBeNull();
    expect(allowed("https://git.example.org/org/../other/repo.git", "https://git.example.org/org")).toBeNull();
    expect(allowed("https://git.example.org/org/%2e%2e/other/repo.git", "https://git.example.org/org/")).toBeNull();
    expect(allowed("ssh://git@git.example.org/org/../other.git", "ssh://git@git.example.org/org")).toBeNull();
    expect(allowed("git@git.example.org:org/../other.git", "git@git.example.org:org")).toBeNull();
    expect(allowed("git@git.example.org:../other.git", "git@git.example.org:")).toBeNull();
  });

  test("a prefix matches at a path-segment boundary only", () => {
    expect(allowed("file:///srv/allowed-evil/x.git", "file:///srv/allowed")).toBeNull();
    expect(allowed("/srv/allowed-evil/x.git", "/srv/allowed")).toBeNull();
    expect(allowed("https://git.example.org/organisation/x", "https://git.example.org/org")).toBeNull();
  });

  test("scheme, user, host and port are compared exactly", () => {
    expect(allowed("http://git.example.org/org/x", "https://git.example.org/org")).toBeNull();
    expect(allowed("https://git.example.org.evil.test/org/x", "https://git.example.org/org")).toBeNull();
    expect(allowed("https://git.example.org@evil.test/org/x", "https://git.example.org/org")).toBeNull();
    expect(allowed("https://git.example.org:8443/org/x", "https://git.example.org/org")).toBeNull();
    expect(allowed("file://evil.test/srv/allowed/x", "file:///srv/allowed")).toBeNull();
    expect(allowed("file:///srv/allowed/x", "/srv/allowed")).toBeNull();
  });

  test("queries, fragments, relative paths and control characters are refused", () => {
    expect(allowed("https://git.example.org/org/x?y=1", "https://git.example.org/org")).toBeNull();
    expect(allowed("https://git.example.org/org/x#main", "https://git.example.org/org")).toBeNull();
    expect(allowed("https://git.example.org/org/a%2fb", "https://git.example.org/org")).toBeNull();
    expect(allowed("srv/allowed/x", "srv/allowed")).toBeNull();
    expect(allowed("file:///srv/allowed/x\n", "file:///srv/allowed")).toBeNull();
    expect(allowed("--upload-pack=touch /tmp/x", "--upload-pack")).toBeNull();
  });

  test("allowed locations come back normalised, and that is what the node clones", () => {
    expect(allowed("file:///srv/allowed/repo.git", "file:///srv/allowed")).toBe("file:///srv/allowed/repo.git");
    expect(allowed("file:///srv/allowed/sub/../repo.git", "file:///srv/allowed/")).toBe("file:///srv/allowed/repo.git");
    expect(allowed("file://localhost/srv/allowed/repo.git", "file:///srv/allowed")).toBe("file:///srv/allowed/repo.git");
    expect(allowed("file:///srv/allowed", "file:///srv/allowed")).toBe("file:///srv/allowed");
    expect(allowed("/srv/allowed/./x/../repo", "/srv/allowed/")).toBe("/srv/allowed/repo");
    expect(allowed("HTTPS://Git.Example.org:443/org/My%20Repo.git", "https://git.example.org/org")).toBe("https://git.example.org/org/My%20Repo.git");
    expect(allowed("git@Git.Example.org:org/repo.git", "git@git.example.org:org")).toBe("git@git.example.org:org/repo.git");
    expect(allowed("https://x/y", "", " ", "https://x/")).toBe("https://x/y");
  });

  test("the node's own catalogue is allowed as it is written", () => {
    expect(allowedGitUrl("../catalogue", "../catalogue", [])).toBe("../catalogue");
    expect(allowedGitUrl("file:///srv/other", "file:///srv/cat", [])).toBeNull();
  });
});
