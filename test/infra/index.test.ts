/** The package's entry point: what a provider imports for a stage of their own, and the types the props name. */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { LogGroupLogDestination, MockIntegration, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { type CfnStage, HttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import { LogGroup } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import {
  type AlertLevel,
  HTTP_ACCESS_LOG_FORMAT,
  REST_ACCESS_LOG_FORMAT,
  type SoapRouteSettings,
} from '../../lib/index';
import { testApp } from './fixtures';

describe('the access-log formats', () => {
  it("give a provider's own HTTP API stage the refusal reason and the limit", () => {
    const stack = new Stack(testApp(), 'ProviderStack');
    const api = new HttpApi(stack, 'OrdersApi');
    const stage = api.defaultStage?.node.defaultChild as CfnStage;
    stage.accessLogSettings = {
      destinationArn: new LogGroup(stack, 'AccessLogs').logGroupArn,
      format: HTTP_ACCESS_LOG_FORMAT,
    };
    const stages = Template.fromStack(stack).findResources('AWS::ApiGatewayV2::Stage');
    const format = JSON.parse(Object.values(stages)[0]?.Properties.AccessLogSettings.Format);
    expect(format).toMatchObject({
      denialReason: '$context.authorizer.reason',
      limitMetric: '$context.authorizer.limitMetric',
      status: '$context.status',
    });
  });

  it('are shown in docs/http-api.md field for field', () => {
    const text = readFileSync(path.join(__dirname, '..', '..', 'docs', 'http-api.md'), 'utf8');
    const block = /field for field[^\n]*\n\n```json\n([\s\S]*?)```/.exec(text)?.[1];
    expect(JSON.parse(block ?? 'null')).toEqual(JSON.parse(HTTP_ACCESS_LOG_FORMAT));
  });

  it("give a provider's own REST stage the refusal reason", () => {
    const stack = new Stack(testApp(), 'ProviderStack');
    const api = new RestApi(stack, 'OrdersApi', {
      deployOptions: {
        accessLogDestination: new LogGroupLogDestination(new LogGroup(stack, 'AccessLogs')),
        accessLogFormat: REST_ACCESS_LOG_FORMAT,
      },
    });
    api.root.addMethod('GET', new MockIntegration());
    const stages = Template.fromStack(stack).findResources('AWS::ApiGateway::Stage');
    const format = JSON.parse(Object.values(stages)[0]?.Properties.AccessLogSetting.Format);
    expect(format).toMatchObject({ denialReason: '$context.authorizer.reason', status: '$context.status' });
  });
});

describe('the types the props name', () => {
  it('are exported: AlertLevel and SoapRouteSettings', () => {
    const levels: readonly AlertLevel[] = [50, 100];
    const soap: SoapRouteSettings = { soapBackendUrl: 'https://soap.example.com/quotes' };
    expect({ levels, soap }).toEqual({
      levels: [50, 100],
      soap: { soapBackendUrl: 'https://soap.example.com/quotes' },
    });
  });
});
