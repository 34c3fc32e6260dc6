import "./styles.css";
import "./pages.css";
import "./run.css";
import "./transcript.css";
import "./side.css";
import "./list.css";
import "./timeline.css";
import "./notifications.css";
import { Component, type ComponentChildren, render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ListPage } from "./list/page.tsx";
import { PoolsPage } from "./pools/page.tsx";
import { onLinkClick, replaceFragment, runPath, useLocation } from "./route.ts";
import { RunPage } from "./run/page.tsx";
import { type Credential, currentCredential, forgetKey, readFragment, tokenProblem, writeFragment } from "./session.ts";
import { SignIn } from "./signin.tsx";

/** The console's shell: who is signed in, and which page the path asks for. */

class Boundary extends Component<{ children: ComponentChildren }, { error: Error | null }> {
  override state = { error: null as Error | null };

  static override getDerivedStateFromError(error: unknown) {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  override render() {
    if (!this.state.error) return this.props.children;
    return (
      <main class="page">
        <section class="problem card" role="alert">
          <h1>The console hit a problem</h1>
          <p>{this.state.error.message}</p>
          <button type="button" class="button primary" onClick={() => location.reload()}>
            Reload
          </button>
        </section>
      </main>
    );
  }
}

function SessionChip({ credential, onSignOut }: { credential: Credential | null; onSignOut: () => void }) {
  if (!credential) return null;
  if (credential.kind === "token") {
    const steer = credential.claims?.interact === true;
    return <span class="session-chip">{steer ? "Share link · can steer" : "Share link · read-only"}</span>;
  }
  return (
    <span class="session-chip">
      <span class="session-label">Signed in with an API key</span>
      <button type="button" class="link-button" onClick={onSignOut}>
        Sign out
      </button>
    </span>
  );
}

function App() {
  const { route, hash } = useLocation();
  const [, setSession] = useState(0);
  const credential = currentCredential();
  const changed = () => setSession((n) => n + 1);

  /** Drops whichever credential failed, so the sign-in form shows. */
  const signInAgain = () => {
    forgetKey();
    const fragment = readFragment();
    if (fragment.token) replaceFragment(writeFragment({ token: null, seq: fragment.seq }));
    changed();
  };

  useEffect(() => {
    document.title =
      route.page === "run"
        ? `${route.runId} · Run console`
        : route.page === "list"
          ? "Runs · Run console"
          : route.page === "pools"
            ? "Pools · Run console"
            : "Run console";
  }, [route]);

  let page: ComponentChildren;
  if (route.page === "unknown") {
    page = (
      <main class="page">
        <section class="problem card">
          <h1>No such page</h1>
          <p>
            The console has the runs list at <code>/</code> and run pages at <code>/runs/&lt;run id&gt;</code>.
          </p>
          <a class="button" href="/" onClick={onLinkClick}>
            All runs
          </a>
        </section>
      </main>
    );
  } else if (!credential) {
    page = <SignIn onSignedIn={changed} />;
  } else if (route.page === "list" || route.page === "pools") {
    if (credential.kind === "token") {
      const runId = credential.claims?.runId;
      page = (
        <SignIn
          onSignedIn={() => {
            replaceFragment("");
            changed();
          }}
          note={runId ? `A share link opens one run (${runId}); sign in with an API key to list runs.` : undefined}
        />
      );
    } else if (route.page === "pools") {
      page = <PoolsPage key={credential.secret} credential={credential} onSignIn={signInAgain} />;
    } else {
      page = <ListPage key={credential.secret} credential={credential} onSignIn={signInAgain} />;
    }
  } else {
    const problem = tokenProblem(credential, route.runId);
    page = problem ? (
      <SignIn
        note={problem}
        onSignedIn={() => {
          replaceFragment(writeFragment({ token: null, seq: readFragment().seq }));
          changed();
        }}
      />
    ) : (
      <RunPage
        key={`${route.runId}\n${credential.secret}`}
        runId={route.runId}
        credential={credential}
        hash={hash}
        onSignIn={signInAgain}
      />
    );
  }

  return (
    <>
      {/* A button, not an in-page link: the fragment carries the share token and the permalink. */}
      <button type="button" class="skip-link" onClick={() => document.getElementById("content")?.focus()}>
        Skip to content
      </button>
      <header class="topbar">
        <a
          class="brand"
          href={credential?.kind === "token" && route.page === "run" ? runPath(route.runId) + hash : "/"}
          onClick={onLinkClick}
        >
          <span class="brand-mark" aria-hidden="true" />
          Run console
        </a>
        {credential?.kind === "key" && (
          <nav class="topnav" aria-label="Pages">
            <a href="/" onClick={onLinkClick} aria-current={route.page === "list" ? "page" : undefined}>
              Runs
            </a>
            <a href="/pools" onClick={onLinkClick} aria-current={route.page === "pools" ? "page" : undefined}>
              Pools
            </a>
          </nav>
        )}
        <SessionChip
          credential={credential}
          onSignOut={() => {
            forgetKey();
            changed();
          }}
        />
      </header>
      <div id="content" tabIndex={-1}>
        <Boundary>{page}</Boundary>
      </div>
    </>
  );
}

const root = document.getElementById("app");
if (root) {
  root.textContent = "";
  render(<App />, root);
}
