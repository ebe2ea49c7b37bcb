import { type ReactNode, useEffect, useId, useRef, useState } from 'react';

export { CopyButton } from '../ui/copy-button.tsx';

// Small controls the settings pages share: copying a secret (`ui/copy-button.tsx`, also used by
// the AI panels), a two-step destructive button, a list of strings to edit, and the status line
// after a save.

/**
 * A button for an action that cannot be undone: the first press asks, a second one (“Yes, …”)
 * acts; “Cancel” puts it back.
 */
export function ConfirmButton({
  label,
  confirmLabel,
  question,
  onConfirm,
  pending = false,
}: {
  label: string;
  confirmLabel: string;
  question: ReactNode;
  onConfirm: () => void;
  pending?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  // Keyboard users land on the question's answer, not on the page's start.
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  if (!asking)
    return (
      <button type="button" onClick={() => setAsking(true)}>
        {label}
      </button>
    );
  return (
    <span className="settings-confirm">
      <span>{question}</span>
      <button
        ref={confirm}
        type="button"
        className="danger"
        disabled={pending}
        onClick={() => {
          onConfirm();
          setAsking(false);
        }}
      >
        {confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** A list of strings with a remove button each and a field to add one (`disabled`: read-only). */
export function ListEditor({
  label,
  items,
  onChange,
  disabled,
  placeholder,
  empty,
}: {
  label: string;
  items: string[];
  onChange: (items: string[]) => void;
  disabled: boolean;
  placeholder?: string;
  empty: string;
}) {
  const [draft, setDraft] = useState('');
  const inputId = useId();
  function add() {
    const value = draft.trim();
    if (value === '' || items.includes(value)) return;
    onChange([...items, value]);
    setDraft('');
  }
  return (
    <div className="settings-list">
      {items.length === 0 ? (
        <p>{empty}</p>
      ) : (
        <ul aria-label={label}>
          {items.map((item) => (
            <li key={item}>
              <code>{item}</code>
              {disabled ? null : (
                <button type="button" onClick={() => onChange(items.filter((other) => other !== item))}>
                  Remove <span className="visually-hidden">{item}</span>
                </button>
              )}
            </li>
          ))}
        </ul>
      )}
      {disabled ? null : (
        <div className="settings-row">
          <label htmlFor={inputId} className="visually-hidden">
            Add to {label.toLowerCase()}
          </label>
          <input
            id={inputId}
            value={draft}
            placeholder={placeholder}
            onChange={(event) => setDraft(event.target.value)}
            onKeyDown={(event) => {
              if (event.key === 'Enter') {
                event.preventDefault();
                add();
              }
            }}
          />
          <button type="button" onClick={add}>
            Add
          </button>
        </div>
      )}
    </div>
  );
}

/** The polite status line after an action (“Saved”), read out by screen readers. */
export function StatusText({ children }: { children: ReactNode }) {
  return (
    <p role="status" className="settings-status">
      {children}
    </p>
  );
}

/**
 * A labelled `<select>`: the label points at it (not wrapped around it), so its accessible name
 * is the label alone, not the label and the chosen option.
 */
export function SelectField({
  label,
  value,
  onChange,
  children,
  className,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  children: ReactNode;
  className?: string;
}) {
  const id = useId();
  return (
    <div className={`settings-field ${className ?? ''}`}>
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(event) => onChange(event.target.value)}>
        {children}
      </select>
    </div>
  );
}

/**
 * The API's refusal of a request's body, field by field: its validation message lists each
 * problem as `/<field>: <reason>`, separated by `; ` (`Invalid body: /sessions: Too small…`).
 * What names no field (a refusal of the whole body) is not in the answer.
 */
export function fieldProblems(message: string | undefined): Record<string, string> {
  if (message === undefined) return {};
  return Object.fromEntries(
    [...message.matchAll(/(?:^|: |; )\/([A-Za-z]+): ([^;]*)/g)].map((match) => [match[1], match[2]]),
  );
}

/**
 * The props that tie a field to its problem (`aria-invalid`, and `aria-describedby` naming the
 * problem's element, then its hint): spread them on the input.
 */
export function describedBy(problemId: string | undefined, hintId?: string) {
  const ids = [problemId, hintId].filter((id) => id !== undefined).join(' ');
  return {
    ...(problemId === undefined ? {} : { 'aria-invalid': true as const }),
    ...(ids === '' ? {} : { 'aria-describedby': ids }),
  };
}

/** A field's problem, under the field, with the id its input points at. */
export function FieldProblem({ id, field, children }: { id: string; field: string; children: ReactNode }) {
  return (
    <span className="error settings-field-problem" id={id} data-field-error={field}>
      {children}
    </span>
  );
}
