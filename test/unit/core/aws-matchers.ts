/**
 * Registers aws-sdk-client-mock-vitest's matchers with their types. The package's `/extend` entry sets
 * them up too, but its types sit behind package `exports`, which this project's module resolution
 * does not read.
 */
import { allCustomMatcher, type CustomMatcher } from 'aws-sdk-client-mock-vitest';
import { expect } from 'vitest';

expect.extend(allCustomMatcher);

declare module 'vitest' {
  // biome-ignore lint/suspicious/noExplicitAny: must repeat vitest's own declaration exactly
  interface Matchers<T = any> extends CustomMatcher<T> {}
}
