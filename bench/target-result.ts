/** A target's result, as `--check` reads it and the report prints it, and how its figures are written. */

export interface TargetResult {
  readonly id: string;
  readonly target: string;
  readonly measured: string;
  /** True too when the target was not judged (`notJudged`): `--check` fails only on a judged target. */
  readonly pass: boolean;
  /** Why the run cannot judge the target (a loaded machine): it is then neither passed nor failed. */
  readonly notJudged?: string;
}

export const fixed = (value: number, digits = 2) => value.toFixed(digits);
export const signed = (value: number, digits: number) => `${value < 0 ? '' : '+'}${fixed(value, digits)}`;
export const grouped = (value: number) => Math.round(value).toLocaleString('en-US');
export const percent = (fraction: number) => `${fixed(100 * fraction, 1)}%`;
export const signedPercent = (fraction: number) => `${signed(100 * fraction, 1)}%`;
