import type { ComponentChildren } from "preact";
import { replaceFragment } from "../route.ts";
import { readFragment, writeFragment } from "../session.ts";

/**
 * A link to another row of this transcript (`#seq=N`), keeping a share link's token in the
 * fragment; following it scrolls to that row and highlights it, as a permalink does.
 */
export function JumpLink(props: { seq: number; label: string; children: ComponentChildren }) {
  const fragment = () => writeFragment({ token: readFragment().token, seq: props.seq });
  return (
    <a
      class="jump-link"
      href={fragment()}
      aria-label={props.label}
      onClick={(event) => {
        event.preventDefault();
        event.stopPropagation();
        replaceFragment(fragment());
      }}
    >
      {props.children}
    </a>
  );
}
