import { useEffect, useState } from "preact/hooks";

/**
 * On a local development server only, which key signs in (GET /v1/dev/sign-in names one only on
 * a loopback host with DEV_SIGN_IN_KEY from .dev.vars; a deployment answers nulls).
 */
export function DevSignInHint({ onUse }: { onUse: (key: string) => void }) {
  const [hint, setHint] = useState<{ key: string; tenant: string } | null>(null);
  useEffect(() => {
    let live = true;
    fetch("/v1/dev/sign-in", { cache: "no-store" })
      .then((res) => (res.ok ? res.json() : null))
      .then((body: { key?: unknown; tenant?: unknown } | null) => {
        if (live && typeof body?.key === "string" && typeof body.tenant === "string") {
          setHint({ key: body.key, tenant: body.tenant });
        }
      })
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, []);
  if (!hint) return null;
  return (
    <p class="notice dev-hint" data-dev-hint="">
      Local development server: sign in with <code>{hint.key}</code> (tenant {hint.tenant}, from .dev.vars).{" "}
      <button type="button" class="link-button" onClick={() => onUse(hint.key)}>
        Use it
      </button>
    </p>
  );
}
