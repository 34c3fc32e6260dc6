import { describe, expect, it } from "vitest";
import { sandboxExit } from "../../../runner-bridge/src/sandbox/bwrap.ts";
import { domainAllowed, sandboxArgv, sandboxOptions } from "../../../runner-bridge/src/sandbox/policy.ts";

describe("the sandbox's network allow-list", () => {
  it("matches a listed name exactly, and *.domain its subdomains only", () => {
    const list = ["api.openai.com", "*.example.com"];
    expect(domainAllowed(list, "api.openai.com")).toBe(true);
    expect(domainAllowed(list, "API.OpenAI.com.")).toBe(true);
    expect(domainAllowed(list, "evil-api.openai.com")).toBe(false);
    expect(domainAllowed(list, "openai.com")).toBe(false);
    expect(domainAllowed(list, "a.b.example.com")).toBe(true);
    expect(domainAllowed(list, "example.com")).toBe(false);
    expect(domainAllowed(list, "example.com.evil.net")).toBe(false);
    expect(domainAllowed(["127.0.0.1"], "127.0.0.1")).toBe(true);
  });
});

describe("sandbox options from a pool's profile", () => {
  it("default to os with no network, and become the same run flags", () => {
    const options = sandboxOptions({ hide: ["/pool"], workspace: "/pool/r/w" }, "os");
    expect(options).toEqual({ mode: "os", network: { kind: "none" }, workspace: "/pool/r/w", hide: ["/pool"] });
    expect(sandboxArgv(options as Exclude<typeof options, string>)).toEqual([
      "--sandbox",
      "os",
      "--network",
      "none",
      "--workspace",
      "/pool/r/w",
      "--hide",
      "/pool",
    ]);
    const codex = sandboxOptions({ network: "allow:api.openai.com" }, "os");
    expect(sandboxArgv(codex as Exclude<typeof codex, string>)).toEqual([
      "--sandbox",
      "os",
      "--network",
      "allow:api.openai.com",
    ]);
    expect(sandboxOptions({ sandbox: "none", network: "none" }, "os")).toBe(
      "--network none needs --sandbox os (without a sandbox the agent has the host's network)",
    );
  });

  it("a HOME of its own is an os option, passed on as --home", () => {
    const options = sandboxOptions({ home: "/srv/homes/codex" }, "os");
    expect(options).toEqual({ mode: "os", network: { kind: "none" }, home: "/srv/homes/codex" });
    expect(sandboxArgv(options as Exclude<typeof options, string>)).toEqual([
      ...["--sandbox", "os", "--network", "none", "--home", "/srv/homes/codex"],
    ]);
    expect(sandboxOptions({ sandbox: "none", home: "/h" }, "none")).toBe(
      "--home needs --sandbox os (without a sandbox the agent has the bridge's HOME)",
    );
    expect(sandboxOptions({ home: "" }, "os")).toBe("--home needs a directory");
  });
});

describe("the agent's exit through bwrap", () => {
  it("status 128+N is the signal N; other statuses are exit codes", () => {
    expect(sandboxExit(143, null)).toEqual({ code: null, signal: "SIGTERM" });
    expect(sandboxExit(130, null)).toEqual({ code: null, signal: "SIGINT" });
    expect(sandboxExit(137, null)).toEqual({ code: null, signal: "SIGKILL" });
    expect(sandboxExit(3, null)).toEqual({ code: 3, signal: null });
    expect(sandboxExit(128, null)).toEqual({ code: 128, signal: null });
    expect(sandboxExit(null, "SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });
  });
});
