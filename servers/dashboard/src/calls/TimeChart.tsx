import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatClock } from '../ui/format.ts';
import type { MarkerKind } from './labels.ts';

// One chart over the call's time with uPlot: x is milliseconds since the call started (the same
// clock as the replay's `?t=` offsets, shown as m:ss), y one or more metric lines. Event markers
// are vertical lines drawn by a plugin on uPlot's draw hook, each kind with its own colour and
// dash; findings are shaded bands. uPlot draws on a canvas, which screen readers cannot read: the
// figure around it (MetricFigure) carries the words.

export interface ChartLine {
  label: string;
  color: string;
  values: Array<number | null>;
}

export interface ChartMarker {
  /** Milliseconds since the call started. */
  at: number;
  kind: MarkerKind;
}

export interface ChartBand {
  from: number;
  to: number;
}

const LINE_COLORS = ['#1a56b8', '#c2410c', '#0b7a4b'];

export function lineColor(index: number): string {
  return LINE_COLORS[index % LINE_COLORS.length] as string;
}

/** Draws the markers and bands; records how many markers it drew on the chart's root element. */
function markersPlugin(markers: ChartMarker[], bands: ChartBand[]): uPlot.Plugin {
  return {
    hooks: {
      drawClear: [
        (chart) => {
          const { ctx } = chart;
          const { top, height } = chart.bbox;
          ctx.save();
          ctx.fillStyle = 'rgba(163, 20, 29, 0.12)';
          for (const band of bands) {
            const left = chart.valToPos(band.from, 'x', true);
            const right = chart.valToPos(band.to, 'x', true);
            ctx.fillRect(left, top, Math.max(right - left, 2 * devicePixelRatio), height);
          }
          ctx.restore();
        },
      ],
      draw: [
        (chart) => {
          const { ctx } = chart;
          const { left, top, width, height } = chart.bbox;
          let drawn = 0;
          ctx.save();
          ctx.lineWidth = 2 * devicePixelRatio;
          for (const marker of markers) {
            const x = Math.round(chart.valToPos(marker.at, 'x', true));
            if (x < left - 1 || x > left + width + 1) continue;
            ctx.strokeStyle = marker.kind.color;
            ctx.setLineDash(marker.kind.dash.map((length) => length * devicePixelRatio));
            ctx.beginPath();
            ctx.moveTo(x, top);
            ctx.lineTo(x, top + height);
            ctx.stroke();
            drawn++;
          }
          ctx.restore();
          chart.root.dataset.markersDrawn = String(drawn);
        },
      ],
    },
  };
}

/**
 * A uPlot chart of `lines` over `x` (ms since the call started), from `range[0]` to `range[1]`,
 * with `markers` and `bands`. Decorative for screen readers: the caller describes it in words.
 */
export function TimeChart({
  x,
  lines,
  range,
  markers,
  bands,
  unit,
}: {
  x: number[];
  lines: ChartLine[];
  range: [number, number];
  markers: ChartMarker[];
  bands: ChartBand[];
  unit: string;
}) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (element === null) return;
    const width = () => Math.max(element.clientWidth, 240);
    const options: uPlot.Options = {
      width: width(),
      height: 180,
      legend: { show: false },
      cursor: { show: true, drag: { x: false, y: false } },
      scales: { x: { time: false, range: () => range } },
      axes: [
        { values: (_chart, ticks) => ticks.map((tick) => formatClock(tick)) },
        { label: unit, size: 56 },
      ],
      series: [
        {},
        ...lines.map((line) => ({ label: line.label, stroke: line.color, width: 2, spanGaps: false })),
      ],
      plugins: [markersPlugin(markers, bands)],
    };
    const chart = new uPlot(options, [x, ...lines.map((line) => line.values)] as uPlot.AlignedData, element);
    const observer = new ResizeObserver(() => chart.setSize({ width: width(), height: 180 }));
    observer.observe(element);
    return () => {
      observer.disconnect();
      chart.destroy();
    };
  }, [x, lines, range, markers, bands, unit]);
  return <div className="time-chart" ref={container} aria-hidden="true" />;
}
