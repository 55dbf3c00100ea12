// The middle of a benchmark's repeated measurements, which a run that a neighbour's load slowed does
// not move.

/** The median: the middle value, or the mean of the two middle ones. */
export function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** The upper median: the middle value, or the higher of the two middle ones (always a measured value). */
export function upperMedian(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
}
