/**
 * A local platform that serves the Service Management API as the hosted 3scale platform does, configured
 * from the `platform` section of the local stack file. Tests start it in-process on a free port.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { generate } from 'selfsigned';
import { PERIODS } from '../../core/budget/periods';
import type { Period } from '../../core/platform/types';
import { type MappingRule, validateMappingRules } from '../../core/settings/config';
import { version } from '../../package.json';
import { closeServer, LOOPBACK, listenOnLoopback } from '../http-server';
import { applicationEventXml } from './admin-xml';
import {
  type ApplicationState,
  loadPlatformConfig,
  MAX_LIMIT_VALUE,
  type PlatformConfig,
  type ServiceState,
} from './config';
import { PlatformModel } from './model';
import { type PlatformStats, platformListener } from './server';
import type { ReportError } from './transactor';
import { type WebhookAction, type WebhookDelivery, WebhookSender } from './webhooks';

export type { AccessTokenConfig, AdminConfig, ProviderSettingsConfig } from './admin-config';
export type {
  ApplicationConfig,
  ApplicationState,
  LimitConfig,
  MetricConfig,
  PlanConfig,
  PlatformConfig,
  ServiceConfig,
  ServiceState,
} from './config';
export { loadPlatformConfig } from './config';
export type { PlatformStats } from './server';
export type { ReportError } from './transactor';
export type { WebhookAction, WebhookDelivery } from './webhooks';

export interface TlsMaterial {
  /** PEM certificate (chain). */
  readonly cert: string;
  /** PEM private key. */
  readonly key: string;
}

export interface StartPlatformOptions {
  /** A PlatformConfig, the whole local stack file, or its `platform` section; validated at start. */
  readonly config: PlatformConfig | unknown;
  /** 0 (the default) picks a free port. */
  readonly port?: number;
  readonly host?: typeof LOOPBACK;
  /** true: HTTPS with a self-signed certificate for 127.0.0.1 generated at start; or the certificate to use. */
  readonly tls?: boolean | TlsMaterial;
  /** Epoch ms; every period and timestamp check reads this clock. */
  readonly now?: () => number;
  /**
   * Each request waits this long before it is served, as a platform a network round trip away answers
   * (the bench sets it); default 0.
   */
  readonly latencyMs?: number;
  /** Where undelivered webhooks are said; default console.warn. */
  readonly warn?: (message: string, attributes: Record<string, unknown>) => void;
}

export interface RunningPlatform {
  /** `http(s)://127.0.0.1:PORT`, no trailing slash. */
  readonly url: string;
  readonly port: number;
  /** The PEM certificate served under TLS, for clients to trust (undefined without TLS). */
  readonly certificate?: string;
  stop(): Promise<void>;
  stats(): PlatformStats;
  /** Errors found in accepted reports, each of which dropped its whole batch, oldest first. */
  reportErrors(): readonly ReportError[];
  /** The application's usage of the metric in the current period window (now, by the platform's clock). */
  usage(serviceId: string, appId: string, metric: string, period: Period): number;
  setApplicationState(serviceId: string, appId: string, state: ApplicationState): void;
  setApplicationPlan(serviceId: string, appId: string, plan: string): void;
  setServiceState(serviceId: string, state: ServiceState): void;
  /** Sends the platform's webhooks to this URL too (its token, if any, in the query). */
  addWebhookUrl(url: string): void;
  /** Webhook deliveries done so far (URLs without their query), oldest first. */
  webhookDeliveries(): readonly WebhookDelivery[];
  /**
   * Deploys these mapping rules to the service's staging proxy configuration, as the admin portal's
   * "Update staging" does (a new version when they changed); production changes only by a promotion.
   */
  deployStaging(serviceId: string, rules: readonly MappingRule[]): number;
  /** Sets the plan's limit on the metric for the period; undefined removes it. Applies at once. */
  setLimit(serviceId: string, plan: string, metric: string, period: Period, value: number | undefined): void;
}

async function selfSignedCertificate(): Promise<TlsMaterial> {
  const pems = await generate([{ name: 'commonName', value: LOOPBACK }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: LOOPBACK },
          { type: 2, value: 'localhost' },
        ],
      },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

function checkPeriod(period: Period): void {
  if (!PERIODS.includes(period)) throw new Error(`unknown period ${JSON.stringify(period)}`);
}

export async function startPlatform(options: StartPlatformOptions): Promise<RunningPlatform> {
  const model = new PlatformModel(loadPlatformConfig(options.config));
  if (options.host !== undefined && options.host !== LOOPBACK) {
    throw new Error(`the local platform listens on ${LOOPBACK} only (got ${options.host})`);
  }
  const now = options.now ?? Date.now;
  const warn =
    options.warn ?? ((message, attributes) => console.warn(`local platform: ${message}`, attributes));
  const webhooks = new WebhookSender(model.webhooks, { warn });
  const notify = (serviceId: string, appId: string, action: WebhookAction) => {
    const service = model.service(serviceId);
    webhooks.send(action, applicationEventXml(action, service, service.application(appId)));
  };
  const stats: PlatformStats = { authorize: 0, authrep: 0, report: 0, transactions: 0 };
  const reportErrors: ReportError[] = [];
  const listener = platformListener({
    model,
    now,
    stats,
    reportErrors,
    statusJson: JSON.stringify({ status: 'ok', version: { backend: `${version}-local` } }),
    onApplicationChange: (action, xml) => webhooks.send(action, xml),
  });
  const latencyMs = options.latencyMs ?? 0;
  if (!Number.isInteger(latencyMs) || latencyMs < 0) {
    throw new Error(`latencyMs must be a whole number of milliseconds, 0 or more (got ${latencyMs})`);
  }
  const answer: typeof listener =
    latencyMs === 0
      ? listener
      : (request, response) => setTimeout(() => listener(request, response), latencyMs);
  const tls = options.tls === true ? await selfSignedCertificate() : options.tls || undefined;
  const server: Server = tls ? createHttpsServer(tls, answer) : createHttpServer(answer);
  const port = await listenOnLoopback(server, options.port ?? 0);
  return {
    url: `${tls ? 'https' : 'http'}://${LOOPBACK}:${port}`,
    port,
    ...(tls && { certificate: tls.cert }),
    stop: async () => {
      await closeServer(server);
      await webhooks.settle();
    },
    stats: () => ({ ...stats }),
    reportErrors: () => [...reportErrors],
    usage(serviceId, appId, metric, period) {
      checkPeriod(period);
      const service = model.service(serviceId);
      service.metric(metric);
      return service.application(appId).counter(metric, period, now());
    },
    setApplicationState(serviceId, appId, state) {
      if (state !== 'active' && state !== 'suspended')
        throw new Error(`unknown state ${JSON.stringify(state)}`);
      const application = model.service(serviceId).application(appId);
      if (application.state === state) return;
      application.state = state;
      notify(serviceId, appId, state === 'suspended' ? 'suspended' : 'updated');
    },
    setApplicationPlan(serviceId, appId, plan) {
      const service = model.service(serviceId);
      if (!service.plans.has(plan))
        throw new Error(`service ${serviceId} has no plan ${JSON.stringify(plan)}`);
      const application = service.application(appId);
      if (application.plan === plan) return;
      application.plan = plan;
      notify(serviceId, appId, 'plan_changed');
    },
    setServiceState(serviceId, state) {
      if (state !== 'active' && state !== 'suspended')
        throw new Error(`unknown state ${JSON.stringify(state)}`);
      model.service(serviceId).state = state;
    },
    addWebhookUrl: (url) => webhooks.addUrl(url),
    webhookDeliveries: () => webhooks.deliveries(),
    deployStaging(serviceId, rules) {
      const service = model.service(serviceId);
      const checked = validateMappingRules(rules, 'rules');
      for (const rule of checked) service.metric(rule.metric);
      return service.proxyConfigs.deploy(checked).version;
    },
    setLimit(serviceId, plan, metric, period, value) {
      checkPeriod(period);
      if (value !== undefined && (!Number.isInteger(value) || value < 0 || value > MAX_LIMIT_VALUE)) {
        throw new Error(`a limit must be a non-negative integer (got ${value})`);
      }
      model.service(serviceId).setLimit(plan, metric, period, value);
    },
  };
}
