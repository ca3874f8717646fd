import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    globalSetup: ['test/bundle-lambdas.global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
