import { useId, useMemo } from 'react';
import { formatClock } from '../ui/format.ts';
import { formatNumber, numbers, summarize } from './statistics.ts';
import { type ChartBand, type ChartMarker, lineColor, TimeChart } from './TimeChart.tsx';

// A chart as a figure: the canvas for the eyes, and for everyone the words: the caption names the
// metric and its unit and sums each line up (min, median, max), and a data table, folded away,
// holds every value.

export interface FigureLine {
  label: string;
  values: Array<number | null>;
}

export function MetricFigure({
  title,
  unit,
  x,
  lines,
  range,
  markers,
  bands,
  note,
}: {
  title: string;
  unit: string;
  /** Milliseconds since the call started, one per sample. */
  x: number[];
  lines: FigureLine[];
  range: [number, number];
  markers: ChartMarker[];
  bands: ChartBand[];
  /** More words for the caption (e.g. the quality limitation reasons). */
  note?: string;
}) {
  const captionId = useId();
  const chartLines = useMemo(
    () => lines.map((line, index) => ({ ...line, color: lineColor(index) })),
    [lines],
  );
  const summaries = lines.map((line) => {
    const summary = summarize(numbers(line.values));
    return summary === undefined
      ? `${line.label}: no value`
      : `${line.label} min ${formatNumber(summary.min)}, median ${formatNumber(summary.median)}, max ${formatNumber(summary.max)}`;
  });
  return (
    <figure className="metric-figure" aria-labelledby={captionId}>
      <figcaption id={captionId}>
        <span className="metric-title">
          {title} ({unit})
        </span>{' '}
        <span className="metric-summary">
          {summaries.join('; ')} over {x.length} {x.length === 1 ? 'sample' : 'samples'}.
          {note === undefined ? null : ` ${note}`}
        </span>
      </figcaption>
      {lines.length > 1 ? (
        <ul className="line-legend">
          {chartLines.map((line) => (
            <li key={line.label}>
              <span className="swatch" style={{ background: line.color }} />
              {line.label}
            </li>
          ))}
        </ul>
      ) : null}
      <TimeChart x={x} lines={chartLines} range={range} markers={markers} bands={bands} unit={unit} />
      <details>
        <summary>Data table: {title.toLowerCase()}</summary>
        <table>
          <thead>
            <tr>
              <th scope="col">Time</th>
              {lines.map((line) => (
                <th scope="col" key={line.label}>
                  {line.label} ({unit})
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {x.map((at, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: samples are positions in aligned arrays
              <tr key={index}>
                <td>{formatClock(at)}</td>
                {lines.map((line) => {
                  const value = line.values[index];
                  return (
                    <td key={line.label}>
                      {value === null || value === undefined ? '—' : formatNumber(value)}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
