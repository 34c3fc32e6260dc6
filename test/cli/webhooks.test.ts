import { describe, expect, test } from "vitest";
import { waitFor } from "../support/wait.ts";
import { useWebhookReceiver, WebhookReceiver } from "../support/webhook-receiver.ts";
import { cli, lines, ndjson } from "./harness/cli.ts";
import { useEdge } from "./harness/edge.ts";

const edge = useEdge();
const run = (args: string[]) => cli(edge.url, args);
const hooks = useWebhookReceiver();

describe("agent-run webhooks", () => {
  test("add prints the id and the secret once; list, ping, deliveries and rm manage it", async () => {
    expect(lines((await run(["webhooks", "list"])).stdout)).toEqual([
      "no webhooks (add one: agent-run webhooks add URL --events run.waiting,run.failed)",
    ]);
    const added = await run(["webhooks", "add", hooks.receiver.url("/cli"), "--events", "run.waiting,run.cancelled"]);
    expect(added).toMatchObject({ code: 0, stderr: "" });
    const [idLine, urlLine, eventsLine, secretLine] = lines(added.stdout);
    const id = (idLine as string).replace(/^webhook\s+/, "");
    const secret = (secretLine as string).replace(/^secret\s+/, "");
    expect(id).toMatch(/^wh_[a-z0-9]+$/);
    expect(urlLine).toBe(`url      ${hooks.receiver.url("/cli")}`);
    expect(eventsLine).toBe("events   run.waiting,run.cancelled");
    expect(secret).toMatch(/^whsec_/);

    const listed = await run(["webhooks", "list"]);
    expect(lines(listed.stdout)[0]).toMatch(/^ID\s+URL\s+EVENTS\s+CREATED\s+STATE$/);
    expect(listed.stdout).toContain(id);
    expect(listed.stdout).not.toContain(secret);
    expect(ndjson((await run(["webhooks", "list", "--json"])).stdout)).toContainEqual(
      expect.objectContaining({ id, events: ["run.waiting", "run.cancelled"], disabledAt: null }),
    );

    const ping = await run(["webhooks", "ping", id]);
    expect(ping.stdout).toMatch(
      new RegExp(`^ping msg_ping_[0-9a-f]+ queued \\(agent-run webhooks deliveries ${id}\\)\\n$`),
    );
    const received = await waitFor(
      "the ping at the receiver",
      () => hooks.receiver.to("/cli").find((r) => r.status === 200),
      10_000,
    );
    expect(WebhookReceiver.verify(received, secret)).toMatchObject({ type: "webhook.ping", data: { run: null } });
    const log = await waitFor("the ping delivered in the log", async () => {
      const out = ndjson<{ type: string; state: string; attempts: number }>(
        (await run(["webhooks", "deliveries", id, "--json"])).stdout,
      );
      return out.find((d) => d.state === "succeeded") && out;
    });
    expect(log).toMatchObject([{ type: "webhook.ping", state: "succeeded", attempts: 1 }]);
    const table = lines((await run(["webhooks", "deliveries", id])).stdout);
    expect(table[0]).toMatch(/^ID\s+TYPE\s+RUN\s+STATE\s+ATTEMPTS\s+LAST\s+NEXT TRY$/);
    expect(table[1]).toMatch(/^msg_ping_\S+\s+webhook\.ping\s+-\s+succeeded\s+1\s+200\s+-$/);

    expect(await run(["webhooks", "rm", id])).toMatchObject({ code: 0, stdout: `removed ${id}\n` });
    const again = await run(["webhooks", "rm", id]);
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(/^agent-run: not_found: /);
  });

  test("bad events and URLs are refused before or by the server, naming what is wrong", async () => {
    const unknown = await run(["webhooks", "add", hooks.receiver.url("/x"), "--events", "run.exploded"]);
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toMatch(/^agent-run: --events: unknown event run.exploded; choose from run.waiting, /);
    const none = await run(["webhooks", "add", hooks.receiver.url("/x")]);
    expect(none.code).toBe(64);
    expect(none.stderr).toMatch(/^agent-run: webhooks add needs --events/);
    const http = await run(["webhooks", "add", "http://hooks.example.com/x", "--events", "run.failed"]);
    expect(http.code).toBe(4);
    expect(http.stderr).toMatch(/^agent-run: invalid_webhook_url: http: is allowed only to loopback hosts/);
    const noTarget = await run(["webhooks", "rm"]);
    expect(noTarget.code).toBe(64);
    expect(noTarget.stderr).toMatch(/^agent-run: webhooks rm needs ID/);
    const badAction = await run(["webhooks", "explode"]);
    expect(badAction.code).toBe(64);
    expect((await run(["webhooks", "list"])).stdout).not.toContain("hooks.example.com");
  });
});
