/** What the run page's operator actions (approvals, commands) share. */

/** What came of an action, shown below it. */
export interface Note {
  tone: "good" | "warn" | "bad";
  text: string;
}

export function Notice({ note }: { note: Note | null | undefined }) {
  if (!note) return null;
  return (
    <p class={`notice ${note.tone}`} role="status">
      {note.text}
    </p>
  );
}

/** The optional reason given with a decision or a cancel. */
export function ReasonInput(props: {
  value: string;
  onChange: (value: string) => void;
  id?: string;
  placeholder?: string;
  disabled?: boolean;
}) {
  const { onChange, ...attributes } = props;
  return <input type="text" {...attributes} onInput={(e) => onChange((e.currentTarget as HTMLInputElement).value)} />;
}
