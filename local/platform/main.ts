/**
 * `npm run platform -- --config FILE [--port N] [--tls | --cert FILE --key FILE]`: the local platform
 * alone, until SIGINT or SIGTERM. A bad config or argument exits with status 1 and says why.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { type RunningPlatform, startPlatform, type TlsMaterial } from './index';

const USAGE = 'usage: npm run platform -- --config FILE [--port N] [--tls | --cert FILE --key FILE]';

function readText(what: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new Error(`cannot read the ${what} ${path}: ${(error as Error).message}`);
  }
}

function portNumber(text: string | undefined): number {
  if (text === undefined) return 0;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`--port must be an integer from 0 to 65535 (got ${JSON.stringify(text)})`);
  }
  return port;
}

function tlsOption(values: { tls?: boolean; cert?: string; key?: string }): boolean | TlsMaterial {
  if ((values.cert === undefined) !== (values.key === undefined))
    throw new Error('--cert and --key go together');
  if (values.cert !== undefined && values.key !== undefined) {
    return { cert: readText('certificate', values.cert), key: readText('key', values.key) };
  }
  return values.tls ?? false;
}

async function main(): Promise<RunningPlatform> {
  const { values } = parseArgs({
    options: {
      config: { type: 'string' },
      port: { type: 'string' },
      tls: { type: 'boolean' },
      cert: { type: 'string' },
      key: { type: 'string' },
    },
  });
  if (values.config === undefined) throw new Error(`--config is required\n${USAGE}`);
  const platform = await startPlatform({
    config: readText('config file', values.config),
    port: portNumber(values.port),
    tls: tlsOption(values),
  });
  console.log(`local platform listening on ${platform.url}`);
  if (values.tls && platform.certificate !== undefined) {
    const certificatePath = join(tmpdir(), `local-platform-${platform.port}.pem`);
    writeFileSync(certificatePath, platform.certificate);
    console.log(
      `self-signed certificate: ${certificatePath} (trust it with NODE_EXTRA_CA_CERTS=${certificatePath})`,
    );
  }
  return platform;
}

main().then(
  (platform) => {
    const stop = (signal: string) => {
      console.log(`${signal}: stopping the local platform`);
      platform.stop().then(
        () => process.exit(0),
        (error: unknown) => {
          console.error(`local platform: could not stop cleanly: ${(error as Error).message}`);
          process.exit(1);
        },
      );
    };
    process.once('SIGINT', () => stop('SIGINT'));
    process.once('SIGTERM', () => stop('SIGTERM'));
  },
  (error: unknown) => {
    console.error(`local platform: ${(error as Error).message}`);
    process.exit(1);
  },
);
