// The few Chrome DevTools protocol calls the profilers make (bench/profile.ts, bench/storm-profile.ts).

/** A minimal Chrome DevTools protocol client over the inspector WebSocket at `url`. */
export async function connectInspector(url: string) {
  const ws = new WebSocket(url);
  await new Promise<void>((resolve, reject) => {
    ws.addEventListener("open", () => resolve());
    ws.addEventListener("error", () => reject(new Error(`inspector ${url} did not open`)));
  });
  let nextId = 0;
  const pending = new Map<number, (result: unknown) => void>();
  ws.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.error ? { error: message.error } : message.result);
  });
  const send = <T>(method: string, params: Record<string, unknown> = {}): Promise<T> => {
    nextId += 1;
    const id = nextId;
    ws.send(JSON.stringify({ id, method, params }));
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`inspector: no answer to ${method}`)), 60_000);
      pending.set(id, (result) => {
        clearTimeout(timer);
        resolve(result as T);
      });
    });
  };
  return { send, close: () => ws.close() };
}
