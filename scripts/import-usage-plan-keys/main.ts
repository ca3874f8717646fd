/** The entry point of `npm run import-usage-plan-keys`: see cli.ts. */
import { run } from './cli';

run(process.argv.slice(2), process.env, (line) => console.log(line)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`import-usage-plan-keys: ${(error as Error).message}`);
    process.exitCode = 1;
  },
);
