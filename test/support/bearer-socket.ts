/**
 * A WebSocket that sends its credential as `Authorization: Bearer`, as the edge requires of API
 * keys and runner tokens (only viewer tokens may travel in `?token=`). Node's WebSocket takes
 * `headers`; its declared type does not say so.
 */
export function bearerSocket(url: string, credential: string): WebSocket {
  const Ctor = WebSocket as unknown as new (url: string, init: { headers: Record<string, string> }) => WebSocket;
  return new Ctor(url, { headers: { authorization: `Bearer ${credential}` } });
}
