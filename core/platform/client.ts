/**
 * The platform client: the PlatformPort over the Service Management API. Every call has a timeout
 * and resolves with an outcome; no answer or network failure is ever thrown to the caller, and no
 * credential appears in a returned message.
 */
import type http from 'node:http';
import { type AccessConfig, ConfigError, DEFAULT_PLATFORM_URL, httpUrl } from '../settings/config';
import { defaultOf } from '../settings/settings';
import { authOutcomeOf, reportFailureOf } from './answers';
import {
  authQuery,
  chunk,
  MAX_TRANSACTIONS_PER_REQUEST,
  reportBody,
  transactionsProblem,
  usageProblem,
} from './encoding';
import { exchange, keepAliveAgent } from './http';
import { credentialSecrets, redact, serviceAuthSecret } from './redact';
import type {
  AuthOutcome,
  Credential,
  PlatformFailure,
  PlatformPort,
  ReportOutcome,
  ServiceAuth,
  Transaction,
  Usage,
} from './types';

/** Asks the platform for the rejection reason header, the limit headers and the metric hierarchy. */
export const PLATFORM_OPTIONS = 'rejection_reason_header=1&limit_headers=1&hierarchy=1';

export const AUTHORIZE_PATH = '/transactions/authorize.xml';
export const AUTHREP_PATH = '/transactions/authrep.xml';
export const REPORT_PATH = '/transactions.xml';

export interface PlatformClientOptions {
  readonly serviceId: string;
  readonly serviceAuth: ServiceAuth;
  /** http or https, optionally with a path prefix; default DEFAULT_PLATFORM_URL. */
  readonly baseUrl?: string;
  /** Deadline of each authorize and authrep call, connection included; default 1000 ms. */
  readonly timeoutMs?: number;
  /** Deadline of each report request (one per 1000 transactions); default 5000 ms. */
  readonly reportTimeoutMs?: number;
  /**
   * Keep-alive agent to send through: an https.Agent for an https URL (for instance one trusting a
   * private CA). The client never destroys an agent it was given. Default: its own keep-alive agent.
   */
  readonly agent?: http.Agent;
}

function positiveInteger(setting: string, value: number): number {
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigError(setting, `must be a positive integer of milliseconds (got ${String(value)})`);
  }
  return value;
}

function refused(code: string, message: string): PlatformFailure {
  return { kind: 'misconfigured', code, status: 0, message };
}

function unexpectedFailure(error: unknown): PlatformFailure {
  const detail = error instanceof Error ? error.message : String(error);
  return { kind: 'unavailable', cause: 'network', message: `platform call failed: ${detail}` };
}

function redactOutcome<T extends AuthOutcome | ReportOutcome>(outcome: T, secrets: readonly string[]): T {
  if (outcome.kind === 'denied') return { ...outcome, reasonText: redact(outcome.reasonText, secrets) };
  if ('message' in outcome) return { ...outcome, message: redact(outcome.message, secrets) };
  return outcome;
}

export class PlatformClient implements PlatformPort {
  private readonly serviceId: string;
  private readonly serviceAuth: ServiceAuth;
  private readonly endpointPrefix: string;
  private readonly timeoutMs: number;
  private readonly reportTimeoutMs: number;
  private readonly agent: http.Agent;
  private readonly ownsAgent: boolean;

  /** Throws ConfigError naming the option when an option is invalid; never throws afterwards. */
  constructor(options: PlatformClientOptions) {
    if (typeof options.serviceId !== 'string' || options.serviceId.trim() === '') {
      throw new ConfigError('serviceId', 'is required and must be a non-empty string');
    }
    const secret = options.serviceAuth && serviceAuthSecret(options.serviceAuth);
    if (typeof secret !== 'string' || secret.trim() === '') {
      throw new ConfigError('serviceAuth', 'needs a non-empty provider key or service token');
    }
    const base = httpUrl('baseUrl', options.baseUrl ?? DEFAULT_PLATFORM_URL);
    this.serviceId = options.serviceId;
    this.serviceAuth = options.serviceAuth;
    this.endpointPrefix = `${base.origin}${base.pathname.replace(/\/+$/, '')}`;
    this.timeoutMs = positiveInteger('timeoutMs', options.timeoutMs ?? defaultOf('platformTimeoutMs'));
    this.reportTimeoutMs = positiveInteger(
      'reportTimeoutMs',
      options.reportTimeoutMs ?? defaultOf('reportTimeoutMs'),
    );
    this.ownsAgent = options.agent === undefined;
    this.agent = options.agent ?? keepAliveAgent(base.protocol);
  }

  /** Checks the credential and the limits for the usage; records nothing. */
  authorize(credential: Credential, usage: Usage = {}): Promise<AuthOutcome> {
    return this.auth(AUTHORIZE_PATH, credential, usage);
  }

  /** Authorizes and, only when authorized, records the usage (the answer's current values include it). */
  authrep(credential: Credential, usage: Usage): Promise<AuthOutcome> {
    return this.auth(AUTHREP_PATH, credential, usage);
  }

  /**
   * Reports the transactions in requests of at most 1000, sent one after another in order. Accepted
   * when every request got 202. Otherwise returns the first failure and sends nothing after it: the
   * requests before it were accepted (`acceptedTransactions` counts their transactions from the
   * start of the list), so a caller that retries the whole batch reports those again (at-least-once).
   * Invalid usage or timestamps refuse the whole report before anything is sent (`status` 0).
   * The platform drops, after its 202, transactions whose timestamp lies outside now-24h..now+1h.
   */
  async report(transactions: readonly Transaction[]): Promise<ReportOutcome> {
    const problem = transactionsProblem(transactions);
    if (problem) return refused(problem.code, problem.message);
    const requests = chunk(transactions, MAX_TRANSACTIONS_PER_REQUEST);
    let acceptedTransactions = 0;
    for (const batch of requests) {
      const failure = await this.reportBatch(batch);
      if (failure) return { ...failure, acceptedTransactions };
      acceptedTransactions += batch.length;
    }
    return { kind: 'accepted', requests: requests.length };
  }

  /** Closes the idle connections of the client's own agent; an injected agent is left to its owner. */
  close(): void {
    if (this.ownsAgent) this.agent.destroy();
  }

  private async auth(path: string, credential: Credential, usage: Usage): Promise<AuthOutcome> {
    const secrets = [serviceAuthSecret(this.serviceAuth), ...credentialSecrets(credential)];
    try {
      const problem = usageProblem(usage);
      if (problem) return refused('usage_value_invalid', problem);
      const query = authQuery(this.serviceId, this.serviceAuth, credential, usage);
      const result = await exchange(
        {
          method: 'GET',
          url: new URL(`${this.endpointPrefix}${path}?${query}`),
          headers: { '3scale-options': PLATFORM_OPTIONS },
        },
        this.agent,
        this.timeoutMs,
      );
      return redactOutcome(result.ok ? authOutcomeOf(result.answer) : result.failure, secrets);
    } catch (error) {
      return redactOutcome(unexpectedFailure(error), secrets);
    }
  }

  private async reportBatch(batch: readonly Transaction[]): Promise<PlatformFailure | undefined> {
    const secrets = [
      serviceAuthSecret(this.serviceAuth),
      ...batch.flatMap((t) => credentialSecrets(t.credential)),
    ];
    try {
      const body = reportBody(this.serviceId, this.serviceAuth, batch);
      const result = await exchange(
        {
          method: 'POST',
          url: new URL(`${this.endpointPrefix}${REPORT_PATH}`),
          headers: {
            '3scale-options': PLATFORM_OPTIONS,
            'content-type': 'application/x-www-form-urlencoded',
            'content-length': String(Buffer.byteLength(body)),
          },
          body,
        },
        this.agent,
        this.reportTimeoutMs,
      );
      const failure = result.ok ? reportFailureOf(result.answer) : result.failure;
      return failure && redactOutcome(failure, secrets);
    } catch (error) {
      return redactOutcome(unexpectedFailure(error), secrets);
    }
  }
}

export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  return new PlatformClient(options);
}

/**
 * Who asks the platform, and so which deadline its authorize calls get: the authorizer answers a call
 * that waits (`platformTimeoutMs`); the reporter re-checks budgets off the request path, where a slow
 * platform must still be heard (`reportTimeoutMs`).
 */
export type PlatformCaller = 'authorizer' | 'reporter';

const AUTH_DEADLINE: Record<PlatformCaller, (config: AccessConfig) => number> = {
  authorizer: (config) => config.platformTimeoutMs,
  reporter: (config) => config.reportTimeoutMs,
};

export interface PlatformClientFromConfigOptions {
  readonly agent?: http.Agent;
  /** Default 'authorizer'. */
  readonly caller?: PlatformCaller;
}

/**
 * The client for a validated configuration; `credential` is the provider key or service token
 * (per `config.platformAuthKind`) that the caller read from Secrets Manager or the local environment.
 */
export function platformClientFromConfig(
  config: AccessConfig,
  credential: string,
  { agent, caller = 'authorizer' }: PlatformClientFromConfigOptions = {},
): PlatformClient {
  const serviceAuth: ServiceAuth =
    config.platformAuthKind === 'service_token'
      ? { kind: 'service_token', serviceToken: credential }
      : { kind: 'provider_key', providerKey: credential };
  return new PlatformClient({
    serviceId: config.serviceId,
    serviceAuth,
    baseUrl: config.platformUrl,
    timeoutMs: AUTH_DEADLINE[caller](config),
    reportTimeoutMs: config.reportTimeoutMs,
    ...(agent && { agent }),
  });
}
