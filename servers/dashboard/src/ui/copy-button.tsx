import { useState } from 'react';

/**
 * Copies `text` to the clipboard and says so (a polite status); when the browser refuses, says to
 * copy by hand. Used for secrets, keys, scripts and diffs.
 *
 * @example
 * ```tsx
 * <CopyButton text={token} label="Copy token" />
 * ```
 */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  async function copy() {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
  }
  return (
    <>
      <button type="button" onClick={copy}>
        {label}
      </button>
      <span role="status" className="settings-status copy-status">
        {state === 'copied' ? 'Copied' : state === 'failed' ? 'Select the text and copy it' : ''}
      </span>
    </>
  );
}
