// The unbiased pass@k estimator of Chen et al. (2021): with n samples of which c are correct,
// pass@k = 1 - C(n-c, k) / C(n, k). Binomials overflow quickly, so it is computed as the product
// 1 - prod_{i = n-c+1}^{n} (1 - k / i), which stays within [0, 1] at every step.

/** pass@k for one question; undefined when n < k (k samples were never drawn, so it cannot be estimated). */
export function passAtK(n: number, c: number, k: number): number | undefined {
  if (
    !Number.isInteger(n) ||
    !Number.isInteger(c) ||
    !Number.isInteger(k) ||
    n < 0 ||
    c < 0 ||
    c > n ||
    k < 1
  ) {
    throw new RangeError(`pass@k needs integers 0 <= c <= n and k >= 1 (got n=${n}, c=${c}, k=${k})`);
  }
  if (n < k) return undefined;
  if (n - c < k) return 1;
  let allWrong = 1;
  for (let i = n - c + 1; i <= n; i++) allWrong *= 1 - k / i;
  return 1 - allWrong;
}

export interface PassAtKSummary {
  /** mean pass@k over the questions with at least k samples; null when there are none */
  value: number | null;
  /** how many questions the mean is over */
  questions: number;
}

/** Mean pass@k over questions, each given as its (n, c); questions with n < k are left out and counted. */
export function meanPassAtK(questions: ReadonlyArray<{ n: number; c: number }>, k: number): PassAtKSummary {
  let sum = 0;
  let count = 0;
  for (const { n, c } of questions) {
    const value = passAtK(n, c, k);
    if (value === undefined) continue;
    sum += value;
    count++;
  }
  return { value: count === 0 ? null : sum / count, questions: count };
}

/** Parses "1,10,100" into sorted distinct positive integers; throws RangeError naming the bad part. */
export function parseKs(text: string): number[] {
  const ks = text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part) => {
      const k = Number(part);
      if (!Number.isInteger(k) || k < 1) throw new RangeError(`k must be a positive integer, got "${part}"`);
      return k;
    });
  if (ks.length === 0) throw new RangeError(`no k values in "${text}"; write them like 1,10,100`);
  return [...new Set(ks)].sort((a, b) => a - b);
}
