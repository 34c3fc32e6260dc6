import { useEffect, useState } from "preact/hooks";
import type { Api } from "../api.ts";
import { navigate, onLinkClick, runPath } from "../route.ts";

/** "Run again": a new run with this one's agent, input, metadata and timeouts (POST …/rerun). */
export function RerunButton({ api, runId }: { api: Api; runId: string }) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const rerun = () => {
    setBusy(true);
    setProblem(null);
    api
      .rerun(runId)
      .then(({ run }) => navigate(runPath(run.id)))
      .catch((error: unknown) => {
        setProblem(`Could not run it again: ${(error as Error).message}`);
        setBusy(false);
      });
  };
  return (
    <>
      <button type="button" class="button" onClick={rerun} disabled={busy}>
        {busy ? "Starting…" : "Run again"}
      </button>
      {problem && (
        <p class="notice bad small" role="alert">
          {problem}
        </p>
      )}
    </>
  );
}

/** Links both ways: the run this one re-ran, and the runs re-run from it. */
export function RerunLinks({ api, runId, version }: { api: Api; runId: string; version: number }) {
  const [links, setLinks] = useState<{ rerunOf: string | null; reruns: string[] } | null>(null);
  useEffect(() => {
    let live = true;
    api
      .reruns(runId)
      .then((found) => live && setLinks(found))
      .catch(() => undefined); // links are a courtesy: the page works without them
    return () => {
      live = false;
    };
  }, [api, runId, version]);
  if (!links || (links.rerunOf === null && links.reruns.length === 0)) return null;
  const link = (id: string) => (
    <a key={id} href={runPath(id)} onClick={onLinkClick}>
      {id}
    </a>
  );
  return (
    <p class="rerun-links muted small" data-reruns="">
      {links.rerunOf && <span>Re-run of {link(links.rerunOf)}</span>}
      {links.rerunOf && links.reruns.length > 0 && " · "}
      {links.reruns.length > 0 && (
        <span>Run again as {links.reruns.flatMap((id, i) => (i === 0 ? [link(id)] : [", ", link(id)]))}</span>
      )}
    </p>
  );
}
