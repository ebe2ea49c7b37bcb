import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

// A day-by-day line chart with uPlot (as the calls pages draw theirs): x is the UTC day, y the
// values, with the web.dev thresholds as dashed lines. A canvas: the page gives the same numbers
// as a table for screen readers.

export interface DailyLine {
  label: string;
  color: string;
  values: Array<number | null>;
}

/** Draws horizontal dashed lines at `levels` (a metric's good and poor thresholds). */
function thresholdsPlugin(levels: Array<{ value: number; color: string }>): uPlot.Plugin {
  return {
    hooks: {
      draw: [
        (chart) => {
          const { ctx } = chart;
          const { left, width } = chart.bbox;
          ctx.save();
          ctx.lineWidth = devicePixelRatio;
          ctx.setLineDash([6 * devicePixelRatio, 4 * devicePixelRatio]);
          for (const level of levels) {
            const y = Math.round(chart.valToPos(level.value, 'y', true));
            ctx.strokeStyle = level.color;
            ctx.beginPath();
            ctx.moveTo(left, y);
            ctx.lineTo(left + width, y);
            ctx.stroke();
          }
          ctx.restore();
        },
      ],
    },
  };
}

/** A chart of `lines` over `days` (`YYYY-MM-DD`, UTC). Hidden from screen readers. */
export function DailyChart({
  days,
  lines,
  unit,
  thresholds,
}: {
  days: string[];
  lines: DailyLine[];
  unit: string;
  thresholds: Array<{ value: number; color: string }>;
}) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (element === null) return;
    const width = () => Math.max(element.clientWidth, 240);
    const x = days.map((day) => Date.parse(`${day}T00:00:00Z`) / 1000);
    const highest = Math.max(
      ...thresholds.map((level) => level.value),
      ...lines.flatMap((line) => line.values.filter((value): value is number => value !== null)),
    );
    const options: uPlot.Options = {
      width: width(),
      height: 200,
      legend: { show: false },
      cursor: { show: true, drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: () => [0, highest * 1.1 || 1] } },
      axes: [{}, { label: unit, size: 64 }],
      series: [
        {},
        ...lines.map((line) => ({
          label: line.label,
          stroke: line.color,
          width: 2,
          points: { show: true, size: 6 },
          spanGaps: false,
        })),
      ],
      plugins: [thresholdsPlugin(thresholds)],
    };
    const chart = new uPlot(options, [x, ...lines.map((line) => line.values)] as uPlot.AlignedData, element);
    element.dataset.points = String(x.length);
    const observer = new ResizeObserver(() => chart.setSize({ width: width(), height: 200 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      chart.destroy();
    };
  }, [days, lines, unit, thresholds]);
  return <div className="daily-chart" ref={container} aria-hidden="true" />;
}
