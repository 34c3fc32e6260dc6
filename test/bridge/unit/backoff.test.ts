import { describe, expect, it } from "vitest";
import { backoffDelay } from "../../../runner-bridge/src/connection.ts";

describe("reconnect backoff (full jitter)", () => {
  it("draws from min/2 up to min·2^attempt", () => {
    expect(backoffDelay(1, 250, 15_000, () => 0)).toBe(125);
    expect(backoffDelay(1, 250, 15_000, () => 1)).toBe(500);
    expect(backoffDelay(3, 250, 15_000, () => 1)).toBe(2000);
    expect(backoffDelay(3, 250, 15_000, () => 0.5)).toBe(1063);
  });

  it("never waits longer than the maximum, however many attempts failed", () => {
    expect(backoffDelay(7, 250, 15_000, () => 1)).toBe(15_000);
    expect(backoffDelay(1_000_000, 250, 15_000, () => 1)).toBe(15_000);
    expect(backoffDelay(1_000_000, 250, 15_000, () => 0)).toBe(125);
  });
});
