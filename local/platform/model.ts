/**
 * The platform's state at run time: services with their metric tree, plans and applications (built from
 * the validated config, changeable by the mutators), and the usage counters per application, metric,
 * period and period window.
 */

import { PERIODS, periodWindow } from '../../core/budget/periods';
import type { Period } from '../../core/platform/types';
import { adminConfig } from './admin-config';
import type {
  ApplicationState,
  MetricConfig,
  PlanConfig,
  PlatformConfig,
  ServiceConfig,
  ServiceState,
} from './config';
import { ProxyConfigs } from './proxy-configs';
import { Tenant } from './tenant';

/** What the Account Management API shows of a plan besides its limits. */
export type PlanInfo = Required<Pick<PlanConfig, 'name' | 'published' | 'approvalRequired' | 'default'>>;

export interface Metric {
  readonly name: string;
  readonly parent?: string;
  readonly children: readonly string[];
}

export interface Limit {
  readonly metric: string;
  readonly period: Period;
  readonly max: number;
}

/** Usage of one metric: added to the counters, or (a value sent as `#n`) setting them. */
export interface UsageDelta {
  readonly set: boolean;
  readonly value: number;
}

export class Application {
  private readonly counters = new Map<string, number>();
  /** The Account Management API's `<id>`: a config application's id, or a number for one created by the API. */
  adminId: string;
  /** The developer account that holds it; config applications have none. */
  accountId: string | undefined;
  name: string;
  description = '';
  /** Epoch ms; set for an application created through the API (config applications have no dates). */
  createdAt: number | undefined;
  updatedAt: number | undefined;

  constructor(
    readonly id: string,
    public userKey: string | undefined,
    readonly appKeys: Set<string>,
    public plan: string,
    public state: ApplicationState,
    readonly referrerFilters: readonly string[],
  ) {
    this.adminId = id;
    this.name = id;
  }

  /** Records a change made through the API (an application with dates only). */
  touch(at: number): void {
    if (this.createdAt !== undefined) this.updatedAt = at;
  }

  private static counterKey(metric: string, period: Period, at: number): string {
    return `${metric} ${period} ${periodWindow(period, at).start}`;
  }

  /** The usage of the metric in the period window containing `at`. */
  counter(metric: string, period: Period, at: number): number {
    return this.counters.get(Application.counterKey(metric, period, at)) ?? 0;
  }

  /** Records usage (already propagated to ancestors) in every period window containing `at`. */
  record(usage: ReadonlyMap<string, UsageDelta>, at: number): void {
    for (const [metric, delta] of usage) {
      for (const period of PERIODS) {
        const key = Application.counterKey(metric, period, at);
        this.counters.set(key, delta.set ? delta.value : (this.counters.get(key) ?? 0) + delta.value);
      }
    }
  }
}

export class Service {
  readonly id: string;
  readonly providerKey: string | undefined;
  readonly serviceToken: string | undefined;
  readonly authentication: ServiceConfig['authentication'];
  state: ServiceState;
  /** Depth first, in config order: the order of usage reports. */
  readonly metrics = new Map<string, Metric>();
  /** Plan name -> `metric period` -> max. */
  readonly plans = new Map<string, Map<string, number>>();
  /** Plan name -> its state, approval and default flag, in config order. */
  readonly planInfo = new Map<string, PlanInfo>();
  readonly applications = new Map<string, Application>();
  readonly applicationsByUserKey = new Map<string, Application>();
  readonly proxyConfigs: ProxyConfigs;

  constructor(config: ServiceConfig) {
    this.id = config.id;
    this.proxyConfigs = new ProxyConfigs(config.id);
    if (config.proxyConfig !== undefined) {
      const deployed = this.proxyConfigs.deploy(config.proxyConfig.production);
      this.proxyConfigs.promote(deployed, 'production');
      if (config.proxyConfig.staging !== undefined) this.proxyConfigs.deploy(config.proxyConfig.staging);
    }
    this.providerKey = config.providerKey;
    this.serviceToken = config.serviceToken;
    this.authentication = config.authentication;
    this.state = config.state;
    this.addMetrics(config.metrics, undefined);
    for (const plan of config.plans) {
      this.planInfo.set(plan.name, {
        name: plan.name,
        published: plan.published ?? true,
        approvalRequired: plan.approvalRequired ?? false,
        default: plan.default ?? false,
      });
      this.plans.set(
        plan.name,
        new Map(plan.limits.map((limit) => [`${limit.metric} ${limit.period}`, limit.value])),
      );
    }
    for (const app of config.applications) {
      const application = new Application(
        app.id,
        app.userKey,
        new Set(app.appKeys),
        app.plan,
        app.state,
        app.referrerFilters,
      );
      this.applications.set(app.id, application);
      if (app.userKey !== undefined) this.applicationsByUserKey.set(app.userKey, application);
    }
  }

  private addMetrics(metrics: readonly MetricConfig[], parent: string | undefined): void {
    for (const metric of metrics) {
      this.metrics.set(metric.name, {
        name: metric.name,
        ...(parent !== undefined && { parent }),
        children: metric.children.map((child) => child.name),
      });
      this.addMetrics(metric.children, metric.name);
    }
  }

  ancestors(metric: string): string[] {
    const found: string[] = [];
    for (let parent = this.metrics.get(metric)?.parent; parent !== undefined; ) {
      found.push(parent);
      parent = this.metrics.get(parent)?.parent;
    }
    return found;
  }

  /** The plan's limits in the platform's order: by metric, then longest period first. */
  limits(planName: string): Limit[] {
    const plan = this.plans.get(planName);
    if (plan === undefined) return [];
    const limits: Limit[] = [];
    for (const metric of this.metrics.keys()) {
      for (const period of PERIODS) {
        const max = plan.get(`${metric} ${period}`);
        if (max !== undefined) limits.push({ metric, period, max });
      }
    }
    return limits;
  }

  /** Adds an application created through the API; it authorizes at once. */
  addApplication(application: Application): void {
    if (this.applications.has(application.id)) throw new Error(`application id ${application.id} is taken`);
    if (application.userKey !== undefined && this.applicationsByUserKey.has(application.userKey)) {
      throw new Error(`user key is already taken by another application of service ${this.id}`);
    }
    this.applications.set(application.id, application);
    if (application.userKey !== undefined) this.applicationsByUserKey.set(application.userKey, application);
  }

  /** Deletes the application; its credentials stop working at once. */
  removeApplication(application: Application): void {
    this.applications.delete(application.id);
    if (application.userKey !== undefined) this.applicationsByUserKey.delete(application.userKey);
  }

  /** Gives the application a new user key; the old one stops working at once. */
  changeUserKey(application: Application, userKey: string): void {
    const holder = this.applicationsByUserKey.get(userKey);
    if (holder !== undefined && holder !== application) {
      throw new Error(`user key is already taken by another application of service ${this.id}`);
    }
    if (application.userKey !== undefined) this.applicationsByUserKey.delete(application.userKey);
    application.userKey = userKey;
    this.applicationsByUserKey.set(userKey, application);
  }

  setLimit(planName: string, metric: string, period: Period, max: number | undefined): void {
    const plan = this.plans.get(planName);
    if (plan === undefined) throw new Error(`service ${this.id} has no plan ${JSON.stringify(planName)}`);
    this.metric(metric);
    const key = `${metric} ${period}`;
    if (max === undefined) plan.delete(key);
    else plan.set(key, max);
  }

  metric(name: string): Metric {
    const metric = this.metrics.get(name);
    if (metric === undefined) throw new Error(`service ${this.id} has no metric ${JSON.stringify(name)}`);
    return metric;
  }

  application(id: string): Application {
    const application = this.applications.get(id);
    if (application === undefined)
      throw new Error(`service ${this.id} has no application ${JSON.stringify(id)}`);
    return application;
  }
}

export class PlatformModel {
  readonly services = new Map<string, Service>();
  /** Provider key -> its first service, used when a request names no service id. */
  readonly defaultServices = new Map<string, Service>();
  readonly webhooks: readonly string[];
  /** Provider key -> its developer accounts, settings and access tokens. */
  readonly tenants = new Map<string, Tenant>();
  /** "Actions in the admin portal also trigger webhooks": off, API changes send no webhook. */
  webhookProviderActions: boolean;

  constructor(config: PlatformConfig) {
    this.webhooks = config.webhooks ?? [];
    const admin = config.admin ?? adminConfig('platform.admin', {}, new Set());
    this.webhookProviderActions = admin.webhookProviderActions;
    for (const serviceConfig of config.services) {
      const service = new Service(serviceConfig);
      this.services.set(service.id, service);
      if (service.providerKey !== undefined && !this.defaultServices.has(service.providerKey)) {
        this.defaultServices.set(service.providerKey, service);
        this.tenants.set(service.providerKey, new Tenant(service.providerKey, admin));
      }
    }
  }

  /** The services a provider key manages, in config order. */
  servicesOf(providerKey: string): Service[] {
    return [...this.services.values()].filter((service) => service.providerKey === providerKey);
  }

  service(id: string): Service {
    const service = this.services.get(id);
    if (service === undefined) throw new Error(`no service ${JSON.stringify(id)}`);
    return service;
  }
}
