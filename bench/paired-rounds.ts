/**
 * Paired rounds: two workloads that ran interleaved, chunk by chunk, compared round by round (each ratio of
 * two chunks next to each other in time), so that what the machine did meanwhile moves both sides alike.
 */

/** A figure of `Figures` taken over the whole workload and, when it ran interleaved, per round. */
export interface PairedFigure<Figures> {
  total(figures: Figures): number | undefined;
  rounds(figures: Figures): readonly number[] | undefined;
}

/**
 * The workload's figure against the other's, round by round when both ran interleaved in the same rounds
 * (each ratio of two chunks next to each other in time); else the two totals.
 */
export function pairedRatios<Figures>(w: Figures, a: Figures, figure: PairedFigure<Figures>): number[] {
  const rounds = figure.rounds(w);
  const against = figure.rounds(a);
  if (rounds && against && rounds.length === against.length) {
    return rounds.map((value, i) => value / (against[i] as number));
  }
  return [(figure.total(w) ?? Number.NaN) / (figure.total(a) ?? Number.NaN)];
}

/** ` (median of N paired rounds; rounds from <low> to <high>)`, or '' when the totals were compared. */
export function pairedRoundsNote(ratios: readonly number[], low: string, high: string): string {
  return ratios.length > 1
    ? ` (median of ${ratios.length} paired rounds; rounds from ${low} to ${high})`
    : '';
}
