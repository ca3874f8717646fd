import { Duration } from 'aws-cdk-lib';
import { LambdaIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { HttpApi, HttpMethod } from 'aws-cdk-lib/aws-apigatewayv2';
import { Peer, Port } from 'aws-cdk-lib/aws-ec2';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { METRIC } from '../../core/observability/metric-names';
import { ConfigError, knownFields } from '../../core/settings/config';
import {
  DEFAULT_SOAP_PATH,
  parseSoapSettings,
  SOAP_TUNING_SETTINGS,
  type SoapSettings,
  type SoapSettingsInput,
  soapSettingsToEnv,
} from '../../core/soap/settings';
import { acknowledgeNagRules } from '../nag-acknowledgements';
import { accessMetric, functionErrorsOf } from './alarms';
import type { HttpApiProtection } from './http-api-protection';
import { addOpenHttpRoutes } from './http-api-routes';
import type { AccessPart, AlarmSpec } from './part';
import { type FunctionPartProps, partFunction } from './part-function';
import type { ApiProtection } from './protection';

/** The SOAP route's settings: the proxy's own (core/soap/settings.ts) and the route's path. */
export type SoapRouteSettings = SoapSettingsInput & {
  /**
   * Path of the route, `POST` only; a literal path.
   * @default DEFAULT_SOAP_PATH
   */
  readonly soapPath?: string;
};

/** Why the SOAP route has no authorizer (the template's metadata and cdk-nag's suppressions). */
const DECIDES_ITSELF =
  'SOAP access proxy: it reads the credential from the envelope and decides with the access core';
const NO_AUTHORIZER_SEES_THE_BODY = `${DECIDES_ITSELF}; an authorizer never sees the request body the credential is in.`;

/** The fields of SoapRouteSettings: a misspelt one from JavaScript is refused, not dropped. */
const SOAP_ROUTE_FIELDS = [
  'soapBackendUrl',
  'soapPath',
  ...SOAP_TUNING_SETTINGS,
] as const satisfies readonly (keyof SoapRouteSettings)[];

const LITERAL_PATH = /^(\/[A-Za-z0-9._~-]+)+$/;

/** The settings validated for AWS: the backend over https only, the path literal. */
export function soapRouteSettings(input: SoapRouteSettings): SoapSettings & { readonly soapPath: string } {
  knownFields('soap', input, SOAP_ROUTE_FIELDS);
  const settings = parseSoapSettings(input);
  if (!settings.soapBackendUrl.startsWith('https://')) {
    throw new ConfigError(
      'soapBackendUrl',
      `must be an https:// URL in AWS: the envelope carries the consumer's credential (got ${settings.soapBackendUrl})`,
    );
  }
  const soapPath = input.soapPath ?? DEFAULT_SOAP_PATH;
  if (!LITERAL_PATH.test(soapPath)) {
    throw new ConfigError('soapPath', `must be a literal path like /soap (got ${JSON.stringify(soapPath)})`);
  }
  return { ...settings, soapPath };
}

export interface SoapProxyPartProps extends FunctionPartProps {
  readonly settings: SoapRouteSettings;
  /** The topic the proxy publishes usage messages to, as the authorizer does. */
  readonly topic: ITopic;
}

/**
 * The SOAP access proxy: a Lambda proxy integration on `POST <soapPath>` of each protected API. It reads
 * the envelope, decides with the access core (the authorizer's configuration, Redis, platform and topic)
 * and forwards allowed calls to the SOAP backend, so the route itself is exempt from the authorizer.
 */
export class SoapProxyPart implements AccessPart {
  public readonly alarms: readonly AlarmSpec[];
  public readonly function: LambdaFunction;
  public readonly path: string;

  constructor(scope: Construct, props: SoapProxyPartProps) {
    const { soapPath, ...settings } = soapRouteSettings(props.settings);
    this.path = soapPath;
    this.function = partFunction(
      scope,
      'SoapProxyFunction',
      props,
      {
        bundle: 'soap',
        invokedByApiGateway: true,
        description:
          'SOAP access proxy: decides from the envelope with the access core, forwards allowed calls',
        memorySize: 512,
        // API Gateway's integration timeout (29 s) bounds the call; the backend deadline is under it.
        timeout: Duration.seconds(29),
        environment: soapSettingsToEnv(settings),
      },
      { publishTo: props.topic, mapsCalls: true },
    );
    const backendPort = Number(new URL(settings.soapBackendUrl).port || 443);
    if (backendPort !== 443) {
      props.network.functionSecurityGroup.addEgressRule(
        Peer.anyIpv4(),
        Port.tcp(backendPort),
        'The SOAP backend',
      );
    }
    this.alarms = [
      {
        id: 'SoapProxyErrors',
        description:
          'The SOAP access proxy failed (a crash, a timeout, or a check it could not make): callers get a Receiver Fault. Read its logs.',
        metric: functionErrorsOf(
          'SOAP proxy errors',
          this.function,
          accessMetric('soapProxy', METRIC.soapProxyError, props.bindings.config.metricsInstance),
        ),
        threshold: 1,
      },
    ];
  }

  /** Adds `POST <soapPath>` to a RestApi, left open by the authorizer: the proxy decides itself. */
  public onProtect(protection: ApiProtection): void {
    if (!(protection.api instanceof RestApi)) {
      throw new Error(
        `${protection.api.node.path}: the SOAP route is added to a RestApi only; add POST ${this.path} with a LambdaIntegration of the SOAP proxy function to this API yourself`,
      );
    }
    const method = protection.api.root
      .resourceForPath(this.path)
      .addMethod('POST', new LambdaIntegration(this.function));
    protection.exemptMethod(method, DECIDES_ITSELF);
    acknowledgeNagRules(method, [
      { id: 'AwsSolutions-APIG4', reason: NO_AUTHORIZER_SEES_THE_BODY },
      { id: 'AwsSolutions-COG4', reason: `${DECIDES_ITSELF}; consumers hold API keys, not Cognito users.` },
    ]);
  }

  /** Adds `POST <soapPath>` to an HttpApi, left open by the authorizer: the proxy decides itself. */
  public onProtectHttpApi(protection: HttpApiProtection): void {
    const { api } = protection;
    if (!(api instanceof HttpApi)) {
      throw new Error(
        `${api.node.path}: the SOAP route is added to an HttpApi only; add POST ${this.path} with an HttpLambdaIntegration (payload 1.0) of the SOAP proxy function to this API yourself`,
      );
    }
    addOpenHttpRoutes(protection, api, {
      id: 'SoapProxyIntegration',
      function: this.function,
      routes: [[HttpMethod.POST, this.path]],
      why: NO_AUTHORIZER_SEES_THE_BODY,
    });
  }
}
