import { expect } from "vitest";
import { Api } from "../../support/api.ts";

/**
 * An operator sending commands and approval decisions over a flapping network: a request whose
 * connection is cut is sent again with the same body (commands are idempotent by commandId,
 * decisions by requestId), until an answer arrives or `giveUpMs` passes.
 */
export class Operator {
  /** Requests sent again after a cut. */
  resends = 0;
  private readonly api: Api;
  private readonly giveUpMs: number;

  constructor(base: string, giveUpMs = 30_000) {
    this.api = new Api(base);
    this.giveUpMs = giveUpMs;
  }

  async send(method: string, route: string, body?: unknown): Promise<{ status: number; body: any }> {
    const deadline = Date.now() + this.giveUpMs;
    for (;;) {
      try {
        return await this.api.request(method, route, body);
      } catch (error) {
        if (Date.now() > deadline)
          throw new Error(`${method} ${route} got no answer within ${this.giveUpMs} ms: ${(error as Error).message}`);
        this.resends++;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }

  /** Sends until answered; the answer must be a success (201, or 200 for a repeat that got through). */
  async expectAccepted(method: string, route: string, body?: unknown): Promise<any> {
    const answer = await this.send(method, route, body);
    expect(answer.status, `${method} ${route}: ${JSON.stringify(answer.body)}`).toBeOneOf([200, 201, 202]);
    return answer.body;
  }
}
