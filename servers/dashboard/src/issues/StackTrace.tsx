import type { PrintedFrame, StackFrame } from './types.ts';
import './stack-trace.css';

// An error's stack as the pages show it: the original frames where a source map mapped them
// (the top one opened on its source), the others as the browser printed them, or the raw stack
// when nothing was symbolicated.

/** `file:line:column`, with what is known of it. */
function place(frame: PrintedFrame): string {
  if (frame.file === undefined) return 'an unknown place';
  if (frame.line === undefined) return frame.file;
  return frame.column === undefined
    ? `${frame.file}:${frame.line}`
    : `${frame.file}:${frame.line}:${frame.column}`;
}

function functionName(frame: PrintedFrame): string {
  return frame.function ?? '(anonymous)';
}

/**
 * The lines of the original source around a mapped frame's line, numbered; its line marked (also
 * the issue page's draft of a fix, for where it would go).
 */
export function SourceContext({
  frame,
}: {
  frame: { file: string; line: number; context?: { before: string[]; line: string; after: string[] } };
}) {
  const context = frame.context;
  if (context === undefined) return null;
  const first = frame.line - context.before.length;
  const lines = [...context.before, context.line, ...context.after];
  return (
    <table className="source-context" aria-label={`Source of ${frame.file} around line ${frame.line}`}>
      <thead className="visually-hidden">
        <tr>
          <th scope="col">Line</th>
          <th scope="col">Source</th>
        </tr>
      </thead>
      <tbody>
        {lines.map((text, index) => {
          const number = first + index;
          const current = number === frame.line;
          return (
            <tr
              key={number}
              className={current ? 'current' : undefined}
              aria-current={current ? 'true' : undefined}
            >
              <th scope="row" className="line-number">
                {current ? <span aria-hidden="true">→ </span> : null}
                {number}
                {current ? <span className="visually-hidden"> (the error’s line)</span> : null}
              </th>
              <td>
                <code>{current ? <mark>{text}</mark> : text}</code>
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

/** One line of a frame: function at place, and for a mapped frame where the minified code was. */
function FrameLine({ frame }: { frame: StackFrame }) {
  return (
    <span className="frame-line">
      <code className="frame-function">{functionName(frame)}</code> at <code>{place(frame)}</code>
      {frame.mapped ? (
        <>
          {' '}
          <span className="frame-origin">from the source map</span>{' '}
          <small className="frame-generated">
            minified: {frame.generated.function === undefined ? '' : `${frame.generated.function} at `}
            {place(frame.generated)}
          </small>
        </>
      ) : null}
    </span>
  );
}

/**
 * The frames of an error, top first: each `function at file:line:column`; a mapped frame says it
 * comes from the source map, shows its minified place in smaller text and opens on its source
 * (the top mapped one open when `openTop`); without `frames`, the `stack` as printed.
 *
 * @example
 * ```tsx
 * <StackTrace stack={error.stack} frames={error.frames} openTop />
 * ```
 */
export function StackTrace({
  stack,
  frames,
  openTop = true,
  label = 'Stack frames',
}: {
  stack?: string | undefined;
  frames?: StackFrame[] | undefined;
  openTop?: boolean;
  label?: string;
}) {
  if (frames === undefined || frames.length === 0)
    return stack === undefined ? (
      <p className="stack-trace">No stack was recorded.</p>
    ) : (
      <pre className="stack-trace raw-stack">{stack}</pre>
    );
  const topMapped = frames.findIndex((frame) => frame.mapped);
  return (
    <ol className="stack-trace stack-frames" aria-label={label}>
      {frames.map((frame, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a stack's frames keep their order and may repeat
        <li key={index} className={frame.mapped ? 'frame mapped' : 'frame unmapped'}>
          {frame.mapped && frame.context !== undefined ? (
            <details open={openTop && index === topMapped}>
              <summary>
                <FrameLine frame={frame} />
              </summary>
              <SourceContext frame={frame} />
            </details>
          ) : (
            <FrameLine frame={frame} />
          )}
        </li>
      ))}
    </ol>
  );
}
