import type { ApiError } from "./api.ts";
import { fields } from "./fields.ts";
import { relativeTime } from "./format.ts";
import { statusLabel } from "./status.tsx";
import type { Credential } from "./session.ts";

/** Dead ends, each said plainly: a refused credential, a missing run, a purged run, no server. */
export interface ProblemProps {
  error: ApiError;
  credential: Credential;
  runId?: string;
  onSignIn: () => void;
  onRetry?: () => void;
}

export function ProblemView({ error, credential, runId, onSignIn, onRetry }: ProblemProps) {
  const subject = runId ? `Run ${runId}` : "This page";
  let title: string;
  let body: string;
  let signIn = false;
  switch (error.status) {
    case 401:
      signIn = true;
      if (credential.kind === "token" && error.code === "token_revoked") {
        title = "This share link was revoked";
        body = `${subject} was shared with this link, and the link has since been revoked. Ask its owner for a new link, or sign in with an API key.`;
        break;
      }
      title = credential.kind === "key" ? "Your API key was not accepted" : "This share link is not valid";
      body =
        credential.kind === "key"
          ? `The server answered: ${error.message}. Sign in again with a current key.`
          : `The server answered: ${error.message}. Ask for a new link, or sign in with an API key.`;
      break;
    case 403:
      title = "Not allowed";
      body = `${subject} cannot be opened with this credential: ${error.message}.`;
      signIn = credential.kind === "token";
      break;
    case 404:
      title = "Not found";
      body = `${subject} was not found. It does not exist, or it belongs to another tenant.`;
      break;
    case 410: {
      const extra = fields(error.body);
      const status = typeof extra.status === "string" ? statusLabel(extra.status).toLowerCase() : "finished";
      const finishedAt = typeof extra.finishedAt === "string" ? extra.finishedAt : null;
      title = "Purged";
      body = `${subject} was purged. It ended ${status}${finishedAt ? ` ${relativeTime(finishedAt)}` : ""}.`;
      break;
    }
    case 0:
      title = "Server unreachable";
      body = error.message;
      break;
    default:
      title = "Something went wrong";
      body = `${error.message} (${error.code}).`;
  }
  return (
    <section class="problem card" role="alert" data-problem={error.status}>
      <h1>{title}</h1>
      <p>{body}</p>
      <div class="problem-actions">
        {signIn && (
          <button type="button" class="button primary" onClick={onSignIn}>
            Sign in with an API key
          </button>
        )}
        {onRetry && (error.status === undefined || error.status >= 500) && (
          <button type="button" class="button" onClick={onRetry}>
            Try again
          </button>
        )}
        {credential.kind === "key" && (
          <a class="button quiet" href="/">
            All runs
          </a>
        )}
      </div>
    </section>
  );
}
