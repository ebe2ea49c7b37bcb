// Small numeric summaries for the charts' text alternatives.

/** The numbers of a series, `null` and non-numbers left out. */
export function numbers(values: ReadonlyArray<unknown> | undefined): number[] {
  return (values ?? []).filter(
    (value): value is number => typeof value === 'number' && Number.isFinite(value),
  );
}

/** Min, median and max of `values` (the median of an even count is the mean of the middle two). */
export function summarize(
  values: readonly number[],
): { min: number; median: number; max: number } | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  const median =
    sorted.length % 2 === 1
      ? (sorted[middle] as number)
      : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
  return { min: sorted[0] as number, median, max: sorted[sorted.length - 1] as number };
}

/** A number for people: integers as they are, others with at most two decimals. */
export function formatNumber(value: number): string {
  return Number.isInteger(value)
    ? value.toLocaleString('en')
    : value.toLocaleString('en', { maximumFractionDigits: 2 });
}

/** `0.125` → `12.5 %`. */
export function formatRate(rate: number): string {
  return `${(rate * 100).toLocaleString('en', { maximumFractionDigits: 1 })} %`;
}
