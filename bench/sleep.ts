/** Brief pauses for polling loops and for letting a request reach the server. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
