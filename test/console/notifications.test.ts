import { describe, expect, it } from "vitest";
import { waitFor } from "../support/wait.ts";
import { useWebhookReceiver } from "../support/webhook-receiver.ts";
import { ALPHA, useConsole } from "./harness.ts";

// The run page's notifications: the webhook deliveries made for the run, read from the API as
// the webhook object moves them on, here to a real receiver that refuses the first attempt.
const t = useConsole();
const hooks = useWebhookReceiver();

/** The section's rows as (type, state) pairs, as the page shows them. */
async function rows(page: import("playwright-core").Page): Promise<string[][]> {
  return page
    .locator(".notifications .notification")
    .evaluateAll((items) =>
      items.map((li) => [li.getAttribute("data-type") ?? "", li.getAttribute("data-state") ?? ""]),
    );
}

describe("the run page's notifications", () => {
  it("lists each webhook delivery of the run with its state, from pending to delivered", async () => {
    const quiet = await t.alpha.create("notify-none");
    const { page } = await t.browser.open({ apiKey: ALPHA });
    await page.goto(t.url(`/runs/${quiet.run.id}`));
    await page.locator(".notifications", { hasText: "No webhook notifications for this run." }).waitFor();

    hooks.receiver.behave("/console", { kind: "fail", times: 1 });
    await t.alpha.ok("POST", "/v1/webhooks", { url: hooks.receiver.url("/console"), events: ["run.cancelled"] });
    const created = await t.alpha.create("notify-cancel");
    await page.goto(t.url(`/runs/${created.run.id}`));
    await page.locator(".notifications", { hasText: "No webhook notifications for this run." }).waitFor();
    await t.alpha.cancel(created.run.id);

    await waitFor(
      "the page to show the refused first attempt, pending",
      async () => {
        const shown = await rows(page);
        const detail = await page.locator(".notifications .notification-detail").first().textContent();
        return shown.length === 1 && shown[0]?.[1] === "pending" && detail?.includes("last 500") && shown;
      },
      20_000,
      100,
    );
    await waitFor("the page to show it delivered", async () => (await rows(page))[0]?.[1] === "succeeded", 30_000, 200);
    expect(await rows(page)).toEqual([["run.cancelled", "succeeded"]]);
    const shownId = await page.locator(".notifications .notification").first().getAttribute("data-webhook-id");
    expect(shownId).toBe([...hooks.receiver.accepted.values()].find((r) => r.path === "/console")?.id);
    expect(await page.locator(".notifications .notification-detail").first().textContent()).toContain("2 attempts");
  });
});
