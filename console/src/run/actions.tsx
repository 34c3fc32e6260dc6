import { useEffect, useState } from "preact/hooks";
import type { Api } from "../api.ts";
import { runPath } from "../route.ts";

/** Share (mint a read-only viewer token) and Download (the whole log as NDJSON). */

export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false; // no clipboard permission: the text stays selectable
  }
}

export function ShareButton({ api, runId }: { api: Api; runId: string }) {
  const [link, setLink] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);

  const share = () => {
    setBusy(true);
    setNote(null);
    api
      .mintToken(runId, { role: "viewer" })
      .then(({ token }) => setLink(`${location.origin}${runPath(runId)}#token=${token}`))
      .catch((error: unknown) => setNote(`Could not create a share link: ${(error as Error).message}`))
      .finally(() => setBusy(false));
  };
  // Escape closes the popover, as any popover does.
  useEffect(() => {
    if (!link) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key === "Escape") setLink(null);
    };
    document.addEventListener("keydown", onKey);
    return () => document.removeEventListener("keydown", onKey);
  }, [link]);
  const copy = () => {
    if (!link) return;
    copyText(link)
      .then((copied) => setNote(copied ? "Link copied." : "Select the link and copy it."))
      .catch(() => setNote("Select the link and copy it."));
  };

  return (
    <div class="share">
      <button type="button" class="button" onClick={share} disabled={busy}>
        {busy ? "Creating link…" : "Share"}
      </button>
      {link && (
        <div class="share-box">
          <label for="share-link">Read-only link (valid 24 hours; anyone with it can watch this run)</label>
          <div class="share-row">
            <input
              id="share-link"
              type="text"
              readOnly
              value={link}
              onFocus={(e) => (e.currentTarget as HTMLInputElement).select()}
            />
            <button type="button" class="button" onClick={copy}>
              Copy
            </button>
            <button type="button" class="button quiet" onClick={() => setLink(null)} aria-label="Close the share link">
              Close
            </button>
          </div>
        </div>
      )}
      {note && (
        <p class="notice small" role="status">
          {note}
        </p>
      )}
    </div>
  );
}

export function DownloadButton({ api, runId }: { api: Api; runId: string }) {
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);

  const download = async () => {
    const lines: string[] = [];
    for await (const events of api.allEvents(runId)) {
      for (const event of events) lines.push(JSON.stringify(event));
    }
    const blob = new Blob(lines.length ? [`${lines.join("\n")}\n`] : [], { type: "application/x-ndjson" });
    const url = URL.createObjectURL(blob);
    const anchor = document.createElement("a");
    anchor.href = url;
    anchor.download = `${runId}.ndjson`;
    document.body.append(anchor);
    anchor.click();
    anchor.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60_000);
  };

  return (
    <>
      <button
        type="button"
        class="button"
        disabled={busy}
        onClick={() => {
          setBusy(true);
          setNote(null);
          download()
            .catch((error: unknown) => setNote(`Download failed: ${(error as Error).message}`))
            .finally(() => setBusy(false));
        }}
      >
        {busy ? "Preparing…" : "Download NDJSON"}
      </button>
      {note && (
        <p class="notice bad small" role="alert">
          {note}
        </p>
      )}
    </>
  );
}
