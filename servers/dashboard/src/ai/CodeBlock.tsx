import { CopyButton } from '../ui/copy-button.tsx';
import './ai.css';

/** A diff's line as a class: added, removed, a hunk or file header, or context. */
function diffClass(line: string): string {
  if (line.startsWith('+++') || line.startsWith('---')) return 'diff-file';
  if (line.startsWith('@@')) return 'diff-hunk';
  if (line.startsWith('+')) return 'diff-added';
  if (line.startsWith('-')) return 'diff-removed';
  return 'diff-context';
}

/**
 * Code to read and copy (a Playwright script, a unified diff, a client's configuration): a
 * captioned figure with a Copy button; the code scrolls sideways and can be focused to do so. A
 * diff's added and removed lines are tinted, their `+` and `-` kept (not colour alone).
 *
 * @example
 * ```tsx
 * <CodeBlock code={reproduction.script} caption="Playwright test (TypeScript)" copyLabel="Copy script" />
 * ```
 */
export function CodeBlock({
  code,
  caption,
  copyLabel,
  diff = false,
}: {
  code: string;
  caption: string;
  copyLabel: string;
  diff?: boolean;
}) {
  const lines = code.replace(/\n$/, '').split('\n');
  return (
    <figure className="code-block">
      <figcaption className="code-block-bar">
        <span>{caption}</span>
        <CopyButton text={code} label={copyLabel} />
      </figcaption>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take the focus to scroll by keyboard */}
      <pre tabIndex={0}>
        <code>
          {diff
            ? lines.map((line, index) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: a diff's lines keep their order and may repeat
                <span key={index} className={diffClass(line)}>
                  {line}
                  {'\n'}
                </span>
              ))
            : code}
        </code>
      </pre>
    </figure>
  );
}
