import { useQuery } from '@tanstack/react-query';
import { useMemo, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api } from '../api.ts';
import type { SessionDetail } from '../replay/types.ts';
import { AppLink } from '../ui/links.tsx';
import { QueryState } from '../ui/status.tsx';
import { Backdrop, type BackdropView } from './Backdrop.tsx';
import { formatRate, InsightsTabs, RangePicker, rangeOf, rangeTimes } from './parts.tsx';
import type { Breakpoint, HeatmapAnswer, HeatmapElement, HeatmapKind, VitalsAnswer } from './types.ts';
import './insights.css';

const KINDS: Array<[HeatmapKind, string]> = [
  ['click', 'Clicks'],
  ['rageclick', 'Rage clicks'],
  ['deadclick', 'Dead clicks'],
  ['scroll', 'Scroll depth'],
];
const BREAKPOINTS: Array<[Breakpoint | '', string]> = [
  ['', 'All widths'],
  ['desktop', 'Desktop (1024 px and wider)'],
  ['tablet', 'Tablet (768–1023 px)'],
  ['mobile', 'Mobile (below 768 px)'],
];
/** Scroll depth lines: where this share of the page views still saw the page. */
const SCROLL_MARKS = [1, 0.75, 0.5, 0.25];

/** The element `selector` names in the replayed page (`body > ` + selector), if it is there. */
function findElement(document: Document, selector: string | null): Element | undefined {
  if (selector === null) return undefined;
  try {
    return document.querySelector(`body > ${selector}`) ?? undefined;
  } catch {
    return undefined;
  }
}

interface Placed {
  selector: string | null;
  count: number;
  /** The element's box on the recorded page, when the selector finds it. */
  box?: { left: number; top: number; width: number; height: number };
  points: Array<{ x: number; y: number; anchor: 'element' | 'page' }>;
}

/**
 * Each element's points on the recorded page: within the element the selector finds (its
 * fractions of the element's box), else at the click's page position.
 */
function place(elements: HeatmapElement[], view: BackdropView): Placed[] {
  const window = view.document.defaultView;
  const scrollX = window?.scrollX ?? 0;
  const scrollY = window?.scrollY ?? 0;
  return elements.map((element) => {
    const found = findElement(view.document, element.selector);
    const rect = found?.getBoundingClientRect();
    const box =
      rect === undefined
        ? undefined
        : { left: rect.left + scrollX, top: rect.top + scrollY, width: rect.width, height: rect.height };
    return {
      selector: element.selector,
      count: element.count,
      ...(box === undefined ? {} : { box }),
      points: element.points.map((point) =>
        box !== undefined && point.elementX !== null && point.elementY !== null
          ? {
              x: box.left + point.elementX * box.width,
              y: box.top + point.elementY * box.height,
              anchor: 'element' as const,
            }
          : { x: point.pageX, y: point.pageY, anchor: 'page' as const },
      ),
    };
  });
}

function ClickOverlay({
  elements,
  view,
  selected,
}: {
  elements: HeatmapElement[];
  view: BackdropView;
  selected: string | null | undefined;
}) {
  const placed = useMemo(() => place(elements, view), [elements, view]);
  return (
    <>
      {placed.map((element) =>
        element.box === undefined ? null : (
          <div
            key={`box:${element.selector}`}
            className={`heatmap-box${element.selector === selected ? ' selected' : ''}`}
            data-box-selector={element.selector ?? ''}
            style={{
              left: element.box.left,
              top: element.box.top,
              width: element.box.width,
              height: element.box.height,
            }}
          >
            <span className="heatmap-box-count">{element.count}</span>
          </div>
        ),
      )}
      {placed.flatMap((element) =>
        element.points.map((point, index) => (
          <span
            // biome-ignore lint/suspicious/noArrayIndexKey: the points of an element have no id
            key={`${element.selector}:${index}`}
            className="heatmap-point"
            data-selector={element.selector ?? ''}
            data-anchor={point.anchor}
            style={{ left: point.x, top: point.y }}
          />
        )),
      )}
    </>
  );
}

/** The colour of a depth band: warm where most page views got, cold where few did. */
function bandColor(share: number): string {
  return `hsla(${Math.round((1 - share) * 240)}, 85%, 50%, 0.35)`;
}

/** The deepest depth at least `share` of the page views reached. */
function depthReachedBy(depths: NonNullable<HeatmapAnswer['depths']>, share: number): number | undefined {
  return depths.filter((step) => step.share >= share).at(-1)?.depth;
}

function ScrollOverlay({ answer, view }: { answer: HeatmapAnswer; view: BackdropView }) {
  const depths = answer.depths ?? [];
  const step = depths.length > 1 ? (depths[1]?.depth ?? 100) - (depths[0]?.depth ?? 0) : 100;
  return (
    <>
      {depths.map((band) => (
        <div
          key={band.depth}
          className="scroll-band"
          data-depth={band.depth}
          data-share={band.share}
          style={{ top: band.depth - step, height: step, background: bandColor(band.share) }}
        />
      ))}
      {SCROLL_MARKS.map((share) => {
        const depth = depthReachedBy(depths, share);
        if (depth === undefined || depth > view.layout.height) return null;
        return (
          <div key={share} className="scroll-line" data-mark={share} style={{ top: depth }}>
            <span>
              {formatRate(share)} reached {depth} px
            </span>
          </div>
        );
      })}
      {depths.length > 0 && (depths.at(-1)?.depth ?? 0) < view.layout.height ? (
        <div
          className="scroll-band"
          data-depth="unreached"
          style={{
            top: depths.at(-1)?.depth ?? 0,
            height: view.layout.height - (depths.at(-1)?.depth ?? 0),
            background: 'rgba(27, 29, 33, 0.45)',
          }}
        />
      ) : null}
    </>
  );
}

function ElementList({
  answer,
  selected,
  onSelect,
}: {
  answer: HeatmapAnswer;
  selected: string | null | undefined;
  onSelect(selector: string | null | undefined): void;
}) {
  const elements = answer.elements ?? [];
  const total = answer.total ?? 0;
  return (
    <section className="heatmap-list" aria-labelledby="heatmap-elements">
      <h2 id="heatmap-elements">
        {KINDS.find(([kind]) => kind === answer.kind)?.[1]}: {total}
      </h2>
      {elements.length === 0 ? (
        <p>Nothing in this range.</p>
      ) : (
        <ol data-list="elements">
          {elements.map((element) => (
            <li key={element.selector ?? ''} data-selector={element.selector ?? ''}>
              <button
                type="button"
                aria-pressed={element.selector === selected}
                onClick={() => onSelect(element.selector === selected ? undefined : element.selector)}
              >
                <code>{element.selector ?? 'an element not in the snapshot'}</code>
                <br />
                <span data-count={element.count}>
                  {element.count} ({formatRate(total === 0 ? 0 : element.count / total)})
                </span>
              </button>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function DepthList({ answer }: { answer: HeatmapAnswer }) {
  const depths = answer.depths ?? [];
  // At most about 40 rows: every n-th depth on long pages.
  const every = Math.max(1, Math.ceil(depths.length / 40));
  return (
    <section className="heatmap-list" aria-labelledby="heatmap-depths">
      <h2 id="heatmap-depths">Scroll depth of {answer.pageViews ?? 0} page views</h2>
      {answer.medianPageHeight === undefined ? null : <p>Median page height {answer.medianPageHeight} px.</p>}
      <ul>
        {SCROLL_MARKS.map((share) => {
          const depth = depthReachedBy(depths, share);
          return depth === undefined ? null : (
            <li key={share} data-reached-by={share}>
              {formatRate(share)} of page views reached {depth} px
            </li>
          );
        })}
      </ul>
      <table data-table="depths">
        <thead>
          <tr>
            <th scope="col">Depth</th>
            <th scope="col">Page views</th>
            <th scope="col">Share</th>
          </tr>
        </thead>
        <tbody>
          {depths
            .filter((_, index) => index % every === every - 1 || index === depths.length - 1)
            .map((step) => (
              <tr key={step.depth} data-depth={step.depth}>
                <th scope="row">{step.depth} px</th>
                <td>{step.reached}</td>
                <td>{formatRate(step.share)}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </section>
  );
}

function HeatmapView({ answer }: { answer: HeatmapAnswer }) {
  const [selected, setSelected] = useState<string | null | undefined>();
  const backdrop = answer.backdrop;
  const session = useQuery({
    queryKey: ['session', 'backdrop', backdrop?.sessionId],
    enabled: backdrop !== undefined,
    queryFn: () => api<SessionDetail>('GET', `/v1/sessions/${encodeURIComponent(backdrop?.sessionId ?? '')}`),
  });
  const replayPath = backdrop === undefined ? undefined : new URL(backdrop.replay, window.location.href);
  return (
    <div className="heatmap-layout">
      <section aria-label="The recorded page with the heatmap">
        {backdrop === undefined ? (
          <p>No recorded page view of this route to draw the heatmap over.</p>
        ) : (
          <>
            <p className="hint">
              Drawn over a recent session's page (
              <AppLink to={`${replayPath?.pathname}${replayPath?.search}`}>open its replay</AppLink>
              ).
            </p>
            <QueryState query={session}>
              {(detail) => (
                <Backdrop
                  session={detail}
                  offsetMs={backdrop.offsetMs}
                  overlay={(view) =>
                    answer.kind === 'scroll' ? (
                      <ScrollOverlay answer={answer} view={view} />
                    ) : (
                      <ClickOverlay elements={answer.elements ?? []} view={view} selected={selected} />
                    )
                  }
                />
              )}
            </QueryState>
          </>
        )}
      </section>
      {answer.kind === 'scroll' ? (
        <DepthList answer={answer} />
      ) : (
        <ElementList answer={answer} selected={selected} onSelect={setSelected} />
      )}
    </div>
  );
}

/** `/heatmaps?route=&kind=&breakpoint=`: clicks, rage, dead clicks or scroll depth over a recorded page. */
export function Heatmaps() {
  const [params, setParams] = useSearchParams();
  const range = rangeOf(params);
  const { from, to } = rangeTimes(range.ms);
  const kind = (KINDS.find(([candidate]) => candidate === params.get('kind'))?.[0] ?? 'click') as HeatmapKind;
  const breakpoint = BREAKPOINTS.find(([candidate]) => candidate === params.get('breakpoint'))?.[0] ?? '';
  const routes = useQuery({
    queryKey: ['insights-routes', from, to],
    queryFn: () => api<VitalsAnswer>('GET', `/v1/vitals?${new URLSearchParams({ from, to, limit: '200' })}`),
  });
  const route = params.get('route') ?? routes.data?.routes[0]?.route;
  const query = new URLSearchParams({ from, to, kind, ...(breakpoint === '' ? {} : { breakpoint }) });
  if (route !== undefined) query.set('route', route);
  const heatmap = useQuery({
    queryKey: ['insights-heatmap', query.toString()],
    enabled: route !== undefined,
    queryFn: () => api<HeatmapAnswer>('GET', `/v1/heatmaps?${query}`),
  });
  function choose(name: string, value: string) {
    const next = new URLSearchParams(params);
    if (value === '') next.delete(name);
    else next.set(name, value);
    setParams(next);
  }
  const known = routes.data?.routes.map((row) => row.route) ?? [];
  return (
    <section aria-labelledby="heatmaps-title" className="insights-page">
      <h1 id="heatmaps-title">Heatmaps</h1>
      <InsightsTabs />
      <form
        className="filter-bar insights-filters"
        aria-label="Heatmap"
        onSubmit={(event) => event.preventDefault()}
      >
        <label>
          Route
          <select value={route ?? ''} onChange={(event) => choose('route', event.target.value)}>
            {route !== undefined && !known.includes(route) ? <option value={route}>{route}</option> : null}
            {known.map((candidate) => (
              <option key={candidate} value={candidate}>
                {candidate}
              </option>
            ))}
          </select>
        </label>
        <label>
          Kind
          <select value={kind} onChange={(event) => choose('kind', event.target.value)}>
            {KINDS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Screen width
          <select value={breakpoint} onChange={(event) => choose('breakpoint', event.target.value)}>
            {BREAKPOINTS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <RangePicker />
      </form>
      {routes.data !== undefined && route === undefined ? (
        <p>No page views in this range yet: heatmaps need recorded sessions.</p>
      ) : (
        <QueryState query={heatmap}>{(answer) => <HeatmapView answer={answer} />}</QueryState>
      )}
    </section>
  );
}
