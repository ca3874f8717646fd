/**
 * What a credential scheme asks about tokens outliving their secret, apart from where the answer is kept
 * (token-not-before.ts keeps it in Redis): so the schemes, and the package's types that name them, do
 * not depend on a Redis client.
 */
export interface TokensNotBefore {
  /** Whether a token of the application issued at `issuedAt` (epoch s; undefined: unknown) is refused. */
  refuses(appId: string, issuedAt: number | undefined): Promise<boolean>;
  /** Refuses the application's tokens issued before `at` (epoch ms). */
  refuseBefore(appId: string, at: number): Promise<void>;
}
