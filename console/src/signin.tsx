import { useState } from "preact/hooks";
import { Api, ApiError } from "./api.ts";
import { DevSignInHint } from "./dev-hint.tsx";
import { storeKey } from "./session.ts";

/** Sign in with an API key. The key is checked against the API, then kept in sessionStorage only. */
export function SignIn({ onSignedIn, note }: { onSignedIn: () => void; note?: string | undefined }) {
  const [key, setKey] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  const submit = (event: Event) => {
    event.preventDefault();
    const secret = key.trim();
    if (!secret) {
      setError("Enter an API key.");
      return;
    }
    setBusy(true);
    setError(null);
    new Api({ kind: "key", secret })
      .listRuns({ limit: 1 })
      .then(() => {
        storeKey(secret);
        onSignedIn();
      })
      .catch((failure: unknown) => {
        if (failure instanceof ApiError && failure.status === 401) setError("That API key was not accepted.");
        else if (failure instanceof ApiError && failure.status === 403)
          setError("That is a run token, not an API key. Open its share link instead.");
        else setError(`Could not sign in: ${(failure as Error).message}`);
      })
      .finally(() => setBusy(false));
  };

  return (
    <main class="page signin-page">
      <form class="card signin" onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in to the run console</h1>
        {note && <p class="notice warn">{note}</p>}
        <p class="muted">
          Use an API key of your tenant. It stays in this browser tab (sessionStorage) and is never put in a URL.
        </p>
        <DevSignInHint onUse={setKey} />
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          value={key}
          onInput={(e) => setKey((e.currentTarget as HTMLInputElement).value)}
          aria-invalid={error ? "true" : undefined}
          aria-describedby={error ? "signin-error" : undefined}
        />
        {error && (
          <p id="signin-error" class="notice bad" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="button primary" disabled={busy}>
          {busy ? "Checking…" : "Sign in"}
        </button>
        <p class="muted small">Opened a share link? It signs you in by itself, for that run only.</p>
      </form>
    </main>
  );
}
