/**
 * `npm start [-- --config FILE] [--port N] [--verbose]`: runs the whole product on this machine from a
 * stack file (default: the bundled demo) and stops cleanly on Ctrl-C after flushing pending usage.
 */
import { parseArgs } from 'node:util';
import { apiGatewayProblem } from '../contract/routes';
import type { LogAttributes, LogPort } from '../core/observability/observability';
import { alertLine } from '../core/reporting/alerts';
import { ConfigError } from '../core/settings/config';
import { bannerLines } from './banner';
import { withAccountApproval } from './portal';
import { type FlushResult, type LocalStack, startLocalStack } from './stack';
import { DEMO_STACK_FILE, readStackFile } from './stack-file';

export const DEFAULT_PORT = 8080;
/** The line a supervisor (or a test) waits for. */
export const READY_PREFIX = 'Ready:';
const STOP_TIMEOUT_MS = 30_000;
/** Signals this soon after the first are relayed copies of it, not a second Ctrl-C. */
const DUPLICATE_SIGNAL_MS = 1000;

const USAGE = `Usage: npm start -- [--config FILE] [--port N] [--redis-cluster] [--approval] [--verbose]
  --config FILE    a local stack file (default: the bundled demo, local/demo.stack.json)
  --port N         the gateway's port (default: the file's local.port, else ${DEFAULT_PORT}; 0 picks a free one);
                   the Express app behind the plugin listens on the next port (a free one with 0)
  --redis-cluster  run on a local Redis Cluster of three primaries (cluster mode), started and stopped
                   with the stack, instead of the file's local.redis
  --approval       the local platform requires the provider's approval of new developer accounts
  --verbose        also print the handlers' info and debug logs`;

/** What a flush could not deliver, one line each; none when every allowed call reached the platform. */
export function shutdownWarnings(result: FlushResult): string[] {
  const warnings = result.notAccepted.map(
    ({ metric, usage, applications }) =>
      `the platform does not take metric "${metric}": ${usage} call(s) of ${applications} application(s) ` +
      'were allowed but not reported (fix the mapping rule or add the metric)',
  );
  if (result.unreported > 0) {
    warnings.push(
      `the usage of ${result.unreported} application(s) could not be reported (is the platform reachable?); ` +
        'it stayed in Redis, which stops with the stack',
    );
  }
  if (result.queued > 0 || result.deadLetters > 0) {
    warnings.push(
      `${result.queued + result.deadLetters} usage message(s) were not accepted by the platform; ` +
        'their usage stayed pending in Redis, which stops with the stack',
    );
  }
  return warnings;
}

function consoleLogger(verbose: boolean): LogPort {
  const line = (level: string, message: string, attributes?: LogAttributes) => {
    const details = attributes && Object.keys(attributes).length > 0 ? ` ${JSON.stringify(attributes)}` : '';
    console.error(`${level} ${message}${details}`);
  };
  return {
    debug: (message, attributes) => verbose && line('debug', message, attributes),
    info: (message, attributes) => verbose && line('info', message, attributes),
    warn: (message, attributes) => line('warn', message, attributes),
    error: (message, attributes) => line('error', message, attributes),
  };
}

function portOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError('--port', `must be an integer from 0 to 65535 (got ${JSON.stringify(text)})`);
  }
  return port;
}

const OPTIONS = {
  config: { type: 'string' },
  port: { type: 'string' },
  'redis-cluster': { type: 'boolean' },
  approval: { type: 'boolean' },
  verbose: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

async function main(argv: readonly string[]): Promise<number> {
  let args: ReturnType<typeof parseArgs<{ options: typeof OPTIONS }>>;
  try {
    args = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: false });
  } catch (error) {
    console.error(`error: ${(error as Error).message}\n${USAGE}`);
    return 1;
  }
  if (args.values.help) {
    console.log(USAGE);
    return 0;
  }

  const logger = consoleLogger(args.values.verbose ?? false);
  let stack: LocalStack;
  let definition: ReturnType<typeof readStackFile>;
  const configPath = args.values.config ?? DEMO_STACK_FILE;
  try {
    definition = readStackFile(configPath);
    if (args.values.approval) definition = withAccountApproval(definition);
    for (const route of definition.gateways.flatMap((gateway) => gateway.routes)) {
      const problem = apiGatewayProblem(route);
      if (problem) logger.warn(`route ${problem}; it works here but cannot be deployed as it is`);
    }
    const port = portOf(args.values.port) ?? definition.local.port ?? DEFAULT_PORT;
    stack = await startLocalStack({
      stack: definition,
      port,
      ...(args.values['redis-cluster'] && { redis: 'cluster' as const }),
      pluginApp: { port: port === 0 ? 0 : port + 1 },
      logger,
      onAlert: (alert) => console.log(alertLine(alert)),
      accessLog: (entry) =>
        console.log(
          `${entry.method} ${entry.path} ${entry.status}${entry.errorType ? ` ${entry.errorType}` : ''}`,
        ),
    });
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(`error: ${error.message}`);
    } else if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      console.error(`error: the gateway port is in use: pass --port N (0 picks a free port)`);
    } else {
      console.error(`error: the local stack did not start: ${(error as Error).message}`);
    }
    return 1;
  }

  // The ready line comes last, so whoever waits for it has the whole banner.
  console.log(`Local stack from ${configPath}`);
  for (const line of bannerLines(definition, stack)) console.log(line);
  console.log(`${READY_PREFIX} local gateway at ${stack.gatewayUrl}`);

  // SIGHUP too: a closed terminal must flush like Ctrl-C, not exit and orphan redis-server.
  const stopSignals: NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
  const signal = await new Promise<NodeJS.Signals>((resolve) => {
    for (const name of stopSignals) process.once(name, () => resolve(name));
  });
  console.log(`\n${signal}: flushing pending usage to the platform, then stopping`);
  const firstSignalAt = Date.now();
  const forceStop = () => {
    // Ctrl-C reaches npm, tsx and this process at once, and both relay it: the first copies are one press.
    if (Date.now() - firstSignalAt < DUPLICATE_SIGNAL_MS) return;
    console.error('stopping at once: pending usage is lost');
    process.exit(130);
  };
  for (const name of stopSignals) process.on(name, forceStop);
  const timer = setTimeout(() => {
    console.error(`error: the stack did not stop within ${STOP_TIMEOUT_MS / 1000} s`);
    process.exit(1);
  }, STOP_TIMEOUT_MS);
  timer.unref();
  let result: FlushResult;
  try {
    result = await stack.stop();
  } catch (error) {
    console.error(`error: stopping failed: ${(error as Error).message}`);
    return 1;
  }
  const warnings = shutdownWarnings(result);
  for (const warning of warnings) console.error(`warn: ${warning}`);
  console.log(
    warnings.length === 0
      ? 'Stopped: pending usage flushed.'
      : 'Stopped: the usage above was not reported to the platform.',
  );
  return 0;
}

if (require.main === module) {
  // Exit explicitly: stdout and stderr are synchronous for files and pipes, and nothing is left to wait for.
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error) => {
      console.error(`error: ${(error as Error).stack ?? String(error)}`);
      process.exit(1);
    },
  );
}
